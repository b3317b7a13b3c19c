#!/bin/bash
# The daemon's cgroupfs writer and sampler on a real cgroup v2 hierarchy:
# writes, safe order, EINVAL back-off, restore, vanished cgroups
# (tests/agent/agentio_kernel_check.c).
. "$FS_SRC/tests/vm/lib.sh"
exec "$FS_BUILD/tests/agent/agentio_kernel_check" "$CG_ROOT" "$(scratch_dev)" /dev/vda
