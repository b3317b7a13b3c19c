#!/bin/bash
# Harness self-test: deliberately fails one check. The harness must report
# this as a test failure (status 1), not as an infra failure (125).
. "$FS_SRC/tests/vm/lib.sh"

assert_eq "arithmetic still works" "$((2 + 2))" 4
assert_eq "deliberate failure" "$((2 + 2))" 5
t_done
