#!/bin/busybox sh
# /init of the test VM (busybox, runs as PID 1 from the initramfs).
#
# Loads the virtio/9p modules, mounts the host root read-only over 9p at
# /host, gives it fresh /proc /sys /dev /tmp /run and a pure cgroup v2
# hierarchy, mounts the per-run share (tag "run") at /host/run/fsvm, and runs
# the suite named in run/env inside `chroot /host`. The suite's exit status
# goes back twice: as run/result.rc on the share, and through isa-debug-exit
# (qemu exits with 2*rc+1, so an odd status means "the guest reported").
# Anything else (panic -> qemu exits 0, hang -> host timeout) is an infra
# failure for the harness.
export PATH=/bin
R=/host
FSVM=$R/run/fsvm

log() { echo "fsvm-init: $*"; }

# Report RC to the host and power off; never returns.
report() {
	rc=$1
	kill $hb_pid 2>/dev/null
	[ "$rc" -gt 127 ] && rc=127 # qemu's status is (rc << 1) | 1, 8 bits
	sync
	umount $FSVM 2>/dev/null
	printf "\\$(printf %o "$rc")" | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
	# isa-debug-exit missing: let the host see an even status (infra).
	poweroff -f
}

fatal() {
	log "FATAL: $*"
	# No verdict: a panic makes qemu exit 0 (-no-reboot, panic=-1).
	echo c >/proc/sysrq-trigger
	poweroff -f
}

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

while read -r m; do
	insmod /modules/"$m" || fatal "insmod $m"
done </modules/order

# msize: 6.1 defaults to 8 KiB per 9p message, which makes exec of big
# binaries slow. cache=loose is safe because the root share is read-only and
# nothing on the host should change it during a run.
o9p=trans=virtio,version=9p2000.L,msize=524288
mount -t 9p -o "$o9p,ro,cache=loose" hostroot $R || fatal "mount hostroot"
mount -t proc proc $R/proc
mount -t sysfs sys $R/sys
mount -t devtmpfs dev $R/dev
# What udev would add: /dev/fd (bash process substitution), std links, pts, shm.
ln -s /proc/self/fd $R/dev/fd
ln -s /proc/self/fd/0 $R/dev/stdin
ln -s /proc/self/fd/1 $R/dev/stdout
ln -s /proc/self/fd/2 $R/dev/stderr
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts devpts $R/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
mount -t cgroup2 -o nsdelegate cgroup2 $R/sys/fs/cgroup || fatal "mount cgroup2"
mount -t bpf bpf $R/sys/fs/bpf 2>/dev/null
mount -t tracefs tracefs $R/sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs $R/tmp
mount -t tmpfs -o mode=0755 tmpfs $R/run
mkdir -p $FSVM
mount -t 9p -o "$o9p" run $FSVM || fatal "mount run share"
ip link set lo up 2>/dev/null
hostname fsvm

# A heartbeat for the host (tests/vm/stall-watch): a guest that stops is
# stopped there, not at the harness's timeout.
while :; do
	cut -d' ' -f1 /proc/uptime >$FSVM/heartbeat.new && mv $FSVM/heartbeat.new $FSVM/heartbeat
	sleep 5
done &
hb_pid=$!
echo $hb_pid >$FSVM/heartbeat.pid # for the harness's selftest-stall

[ -r $FSVM/env ] || fatal "no env file on the run share"
. $FSVM/env
mkdir -p $FSVM/out
# The kernel's symbols, once per image (Debian's /boot/System.map is a
# placeholder): tests/vm/stall-watch names a stopped vCPU's RIP with them.
[ -n "$FS_VM_KALLSYMS" ] && cat /proc/kallsyms >$FSVM/kallsyms

# The suite sees nothing of the initramfs environment: a sane PATH plus the
# FS_* variables the host wrote to run/env (sourced by bash, which reads the
# host's printf %q quoting back exactly).
in_chroot() {
	chroot $R /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root TERM="${FS_VM_TERM:-dumb}" LANG=C.UTF-8 \
		/bin/bash -c 'set -a; . /run/fsvm/env; set +a; cd /tmp; exec "$@"' fsvm "$@"
}

if [ "$FS_VM_SHELL" = before ]; then
	log "shell (exit to run the suite)"
	in_chroot setsid -c /bin/bash -i </dev/ttyS0 >/dev/ttyS0 2>&1
fi

suite=$FS_SRC/tests/vm/suites/$FS_SUITE.sh
log "running $FS_SUITE (uptime $(cut -d' ' -f1 /proc/uptime) s)"
# Output goes to the serial console and to result.log; the status through a
# file, because busybox sh has no PIPESTATUS.
{
	in_chroot /bin/bash "$suite" </dev/null 2>&1
	echo $? >/tmp/rc
} | tee $FSVM/result.log
rc=$(cat /tmp/rc)
log "suite $FS_SUITE exited $rc (uptime $(cut -d' ' -f1 /proc/uptime) s)"

if [ "$FS_VM_SHELL" = after ]; then
	log "shell (exit to finish)"
	in_chroot setsid -c /bin/bash -i </dev/ttyS0 >/dev/ttyS0 2>&1
fi

echo "$rc" >$FSVM/result.rc
report "$rc"
