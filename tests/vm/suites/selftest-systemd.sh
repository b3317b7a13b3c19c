#!/bin/bash
# vm: systemd
# Harness self-test of the systemd boot (expected harness status 0): the
# guest runs Debian's systemd as PID 1 on a writable overlay of the host
# root, the suite runs as a unit, and units can be started and given cgroup
# properties. With FS_SELFTEST_FAIL=1 it fails on purpose (expected 1: the
# status travels back through the unit like through init.sh).
. "$FS_SRC/tests/vm/lib.sh"

assert_eq "PID 1 is systemd" "$(cat /proc/1/comm)" systemd
assert_eq "/ is an overlay" "$(findmnt -no FSTYPE /)" overlay
t_check "/ is writable (the overlay's tmpfs upper layer)" touch /etc/fsvm-selftest
t_check "the host's enabled units are hidden" test ! -e /etc/systemd/system/multi-user.target.wants
assert_eq "/sys/fs/cgroup is cgroup2" "$(stat -fc %T /sys/fs/cgroup)" cgroup2fs
for m in /run /run/fsvm /tmp /dev/pts; do
	t_check "$m is mounted" mountpoint -q "$m"
done
t_check "output dir writable" touch "$FS_OUT/selftest-systemd.touch"
assert_eq "running as a unit" "$(cut -d: -f3 /proc/self/cgroup)" /system.slice/fsvm-suite.service
state=$(timeout 60 systemctl is-system-running --wait)
t_note "system state: $state; failed units: $(systemctl --no-legend --plain list-units --state=failed | tr '\n' ' ')"
t_check "system is running (no failed unit)" test "$state" = running
t_note "$(systemd-analyze time 2>&1 | head -1)"
t_tp_hold

t_section "a transient unit in a user slice"
cg=/sys/fs/cgroup/user.slice/user-4242.slice
t_check "systemd-run in user-4242.slice" \
	systemd-run --quiet --slice=user-4242.slice --unit=fsvm-selftest -p CPUWeight=42 sleep 60
assert_eq "CPUWeight=42 written by systemd" "$(cat $cg/fsvm-selftest.service/cpu.weight)" 42
t_check "systemctl stop user-4242.slice removes it" systemctl stop user-4242.slice
t_check "its cgroup is gone" test ! -d $cg

[[ ${FS_SELFTEST_FAIL:-} == 1 ]] && t_fail "deliberate failure (FS_SELFTEST_FAIL=1)"
t_done
