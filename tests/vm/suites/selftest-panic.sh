#!/bin/bash
# Harness self-test: crashes the guest kernel before reporting. The harness
# must report an infra failure (125): the VM never gave a verdict.
echo "ok 1 - about to crash the kernel"
sync
echo c >/proc/sysrq-trigger
sleep 60
