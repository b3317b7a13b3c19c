#!/bin/bash
# Harness self-test: the guest's heartbeat stops (its loop, in /init, is
# stopped) while the suite waits. The harness's stall watch must stop the VM
# well before the timeout and report an infra failure (125) with each vCPU's
# position.
echo "ok 1 - stopping the heartbeat"
kill -STOP "$(cat /run/fsvm/heartbeat.pid)"
sleep 100000
