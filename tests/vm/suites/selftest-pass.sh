#!/bin/bash
# Harness self-test: a passing suite (expected harness status 0). Also checks
# the chroot is what suites rely on: mounts, tools, the output share.
. "$FS_SRC/tests/vm/lib.sh"

for m in / /proc /sys /dev /dev/pts /sys/fs/cgroup /tmp /run /run/fsvm; do
	t_check "$m is mounted" mountpoint -q "$m"
done
assert_eq "/ is the host root over 9p" "$(findmnt -no FSTYPE /)" 9p
assert_eq "/ is read-only" "$(findmnt -no OPTIONS / | cut -d, -f1)" ro
assert_eq "/sys/fs/cgroup is cgroup2" "$(stat -fc %T /sys/fs/cgroup)" cgroup2fs
t_check "repo visible at FS_SRC" test -f "$FS_SRC/tests/vm/lib.sh"
for tool in python3 stress-ng fio dd taskset; do
	t_check "$tool available" command -v "$tool"
done
t_check "/tmp writable" touch /tmp/x
t_check "output dir writable" touch "$FS_OUT/selftest-pass.touch"
t_check "bash process substitution (/dev/fd)" cat <(echo ok)
t_tp_hold
t_done
