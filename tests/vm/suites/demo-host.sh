#!/bin/bash
# vm: systemd
# `tools/demo` as a newcomer runs it on a fresh Debian 12 machine: systemd as
# PID 1, a pure cgroup v2 hierarchy with the cpu, io and memory controllers,
# and root. There tools/demo runs on the host itself, not in the test VM,
# in /sys/fs/cgroup/fairshare-demo.slice: the path the other suites do not
# take (they boot the VM because the development machines are hybrid).
# The disk part reads the scratch disk (FS_DEMO_DISK, as README says).
#
# Asserted: tools/demo exits 0; it chose the host (not a VM); both phases'
# verdicts are printed; the plot exists at the path it printed; and it leaves
# the machine as it found it (no demo cgroup, no daemon, no failed unit).
. "$FS_SRC/tests/vm/lib.sh"

t_section "the machine"
assert_eq "PID 1 is systemd" "$(cat /proc/1/comm)" systemd
ctl=" $(cat /sys/fs/cgroup/cgroup.controllers) "
t_check "cgroup v2 with cpu, io and memory" \
	test "${ctl/ cpu /}" != "$ctl" -a "${ctl/ io /}" != "$ctl" -a "${ctl/ memory /}" != "$ctl"

t_section "tools/demo (its own checks, as it prints them)"
log=$FS_OUT/demo-host.log
rc=0
FS_DEMO_DISK=/dev/vda FS_DEMO_DISK_BPS=$FS_VM_DISK_BPS "$FS_SRC/tools/demo" >"$log" 2>&1 || rc=$?
sed 's/^/#   /' "$log"
assert_eq "tools/demo exits 0" "$rc" 0
t_check "it ran on this host, not in a VM" grep -q '^demo: on this host, cgroup2 at /sys/fs/cgroup' "$log"
t_check "a CPU verdict" grep -q '^# CPU: without fairshare, .* with fairshare' "$log"
t_check "a disk verdict" grep -q '^# disk: without fairshare, .* with fairshare' "$log"
plot=$(sed -n 's/^demo: plot of the measured shares against the plan: //p' "$log")
t_check "the plot is at the path it printed ($plot)" test -s "$plot"
[[ -s $plot ]] && cp "$plot" "$FS_OUT/"

t_section "the machine afterwards"
t_check "no demo cgroup left" test ! -e /sys/fs/cgroup/fairshare-demo.slice
t_check "no fairshared left" eval '! pgrep -x fairshared'
state=$(timeout 30 systemctl is-system-running)
t_check "no failed unit ($state: $(systemctl --no-legend --plain list-units --state=failed | tr '\n' ' '))" \
	test "$state" = running
t_done
