#!/bin/bash
# Harness self-test: never finishes. Run with a short --timeout; the harness
# must report an infra failure (125), not a test failure.
echo "ok 1 - about to hang"
sleep 100000
