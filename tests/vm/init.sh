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
#
# A suite with a "# vm: systemd" line (run passes fsvm.init=systemd) boots
# Debian's systemd as PID 1 instead: see boot_systemd below.
export PATH=/bin
R=/host
FSVM=$R/run/fsvm

log() { echo "fsvm-init: $*"; }

# What the host's stall watch (tests/vm/stall-watch) reads, in DIR (the run
# share as the suite will see it), the same in both boots:
# heartbeat_loop DIR: a command line for sh that rewrites DIR/heartbeat
# every 5 s; the chroot boot runs it in the background, the systemd boot as
# a unit. A guest that stops is stopped there, not at the harness's timeout.
heartbeat_loop() {
	echo "while :; do cut -d' ' -f1 /proc/uptime >$1/heartbeat.new && mv $1/heartbeat.new $1/heartbeat; sleep 5; done"
}
# tp_hold: the command that holds two no-op eBPF programs on each
# tracepoint fairshared attaches to (bpf/tp_hold.bpf.c), pinned under
# /sys/fs/bpf/fsvm-hold, or nothing (no such build, or FS_VM_TP_HOLD=0).
# Why: under TCG the guest froze, 5 of 11 e2e-disk runs on 2026-11-28,
# while its kernel patched its own text (text_poke_bp) as fairshared
# attached or detached and a tracepoint went from 0 to 1 function or 1 to
# 2 (its static key, its static call). With two held from boot, fairshared's
# programs are a third and their removal leaves two: no patching. Both
# phases of every suite run with the hold; it costs two empty program
# calls per context switch and per bio.
tp_hold() {
	h=$FS_BUILD/bpf/fs-tp-hold
	[ "${FS_VM_TP_HOLD:-1}" != 0 ] && [ -x "$1$h" ] && echo "$h /sys/fs/bpf/fsvm-hold"
}
# save_kallsyms DIR: the kernel's symbols, once per image (Debian's
# /boot/System.map is a placeholder): the stall watch names a stopped
# vCPU's RIP with them.
save_kallsyms() {
	[ -z "$FS_VM_KALLSYMS" ] || cat /proc/kallsyms >$1/kallsyms
}

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

# --- systemd as PID 1 ("# vm: systemd" suites) ------------------------------
# systemd wants a root it can write (/etc, /var, its units), so the read-only
# host root becomes the lower layer of an overlay whose upper layer is tmpfs:
# writes stay in the guest's RAM and vanish with it, the host is never
# touched. The guest gets a machine of its own (fresh machine-id, no host
# fstab, none of the host's enabled units: /etc/systemd/system starts empty)
# and Debian's units from /lib/systemd/system, less those that make no sense
# in this VM or cost boot time under TCG (masked below). The suite runs as
# fsvm-suite.service (tests/vm/suite-unit.sh), which reports like this
# script does: result.log, result.rc, isa-debug-exit.

# Units masked in the guest: udev (devtmpfs has every node; nothing here
# waits for a .device), ttys and logins, network, timers, the first-boot
# and update machinery (a fresh /etc looks like a first boot), and one-shot
# setup that would only touch the overlay: tmpfiles (a suite runs
# systemd-tmpfiles for what it needs) and the mqueue/debugfs/tracefs mounts
# took 8-10 s each at host load 18. Names that do not exist are harmless.
SD_MASK="systemd-udevd.service systemd-udev-trigger.service systemd-udev-settle.service
systemd-udevd-control.socket systemd-udevd-kernel.socket
getty.target getty@.service serial-getty@.service console-getty.service getty-static.service
systemd-logind.service systemd-user-sessions.service systemd-ask-password-console.path
systemd-ask-password-wall.path systemd-initctl.socket systemd-journald-audit.socket
networking.service systemd-networkd.service systemd-resolved.service NetworkManager.service
timers.target systemd-timesyncd.service
systemd-firstboot.service systemd-machine-id-commit.service systemd-random-seed.service
systemd-repart.service systemd-pcrphase.service systemd-pcrphase-sysinit.service
systemd-hwdb-update.service systemd-journal-catalog-update.service systemd-update-done.service
ldconfig.service systemd-sysusers.service systemd-update-utmp.service
systemd-update-utmp-runlevel.service systemd-journal-flush.service systemd-remount-fs.service
systemd-fsck-root.service systemd-binfmt.service proc-sys-fs-binfmt_misc.automount
sys-fs-fuse-connections.mount sys-kernel-config.mount dev-hugepages.mount
kmod-static-nodes.service systemd-modules-load.service systemd-sysctl.service
systemd-pstore.service apparmor.service keyboard-setup.service console-setup.service
setvtrgb.service e2scrub_reap.service
systemd-tmpfiles-setup.service systemd-tmpfiles-setup-dev.service systemd-tmpfiles-clean.service
dev-mqueue.mount sys-kernel-debug.mount sys-kernel-tracing.mount"

boot_systemd() {
	N=/newroot
	E=$N/etc/systemd/system
	while read -r m; do
		insmod /modules/"$m" || fatal "insmod $m"
	done </modules/order.systemd
	mkdir -p /ovl $N
	mount -t tmpfs -o mode=0755 ovl /ovl
	mkdir -p /ovl/upper /ovl/work
	mount -t overlay -o lowerdir=$R,upperdir=/ovl/upper,workdir=/ovl/work overlay $N ||
		fatal "mount overlay"
	[ -x $N/lib/systemd/systemd ] || fatal "no /lib/systemd/systemd on the host (apt-get install systemd)"
	# /run with the run share in it, before systemd starts: systemd mounts
	# its own tmpfs only on a /run that is not a mount point yet.
	mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs $N/run
	mkdir -p $N/run/fsvm
	mount -t 9p -o "$o9p" run $N/run/fsvm || fatal "mount run share"
	mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs $N/tmp
	[ -r $N/run/fsvm/env ] || fatal "no env file on the run share"
	. $N/run/fsvm/env
	mkdir -p $N/run/fsvm/out
	save_kallsyms $N/run/fsvm

	sed s/-//g /proc/sys/kernel/random/uuid >$N/etc/machine-id
	# A host that is a container (/.dockerenv, /run/.containerenv) would make
	# systemd think the guest is one: it then takes its command line from its
	# own argv instead of the kernel's and skips units meant for real machines.
	rm -f $N/.dockerenv
	echo fsvm >$N/etc/hostname
	# The host's fstab names the host's disks: systemd would wait for them.
	echo "# fsvm: nothing to mount" >$N/etc/fstab
	# An empty, opaque /etc/systemd/system: the host's enabled services
	# (databases, timers, gettys) must not start in the guest.
	rm -rf $E
	mkdir -p $E $N/etc/systemd/system-generators
	for u in $SD_MASK; do
		ln -s /dev/null $E/$u
	done
	# Generators (fstab, getty, sysv, gpt-auto, ...): nothing here needs
	# one, and each is a program started over 9p.
	for g in $N/lib/systemd/system-generators/*; do
		[ -e "$g" ] && ln -s /dev/null $N/etc/systemd/system-generators/"${g##*/}"
	done

	cat >$E/fsvm.target <<-EOF
	[Unit]
	Description=fsvm: the suite
	Requires=basic.target
	After=basic.target
	Wants=fsvm-suite.service fsvm-heartbeat.service fsvm-tp-hold.service
	AllowIsolate=yes
	EOF
	hold=$(tp_hold $N)
	[ -z "$hold" ] || cat >$E/fsvm-tp-hold.service <<-EOF
	[Unit]
	Description=fsvm: no-op eBPF programs held on fairshared's tracepoints
	DefaultDependencies=no
	After=sys-fs-bpf.mount

	[Service]
	Type=oneshot
	RemainAfterExit=yes
	ExecStart=$hold
	EOF
	# The heartbeat as a unit (without it CI once waited the whole 600 s
	# for a stopped systemd guest).
	cat >$E/fsvm-heartbeat.service <<-EOF
	[Unit]
	Description=fsvm: heartbeat for the host's stall watch
	DefaultDependencies=no

	[Service]
	ExecStart=/bin/sh -c "$(heartbeat_loop /run/fsvm)"
	EOF
	ln -s fsvm.target $E/default.target
	# The wrapper reports through isa-debug-exit, which ends qemu at once;
	# if it returns, or the unit cannot start, powering off makes qemu exit
	# 0 (no verdict, infra). A boot that never gets there ends by the job
	# timeout instead of the host's.
	cat >$E/fsvm-suite.service <<-EOF
	[Unit]
	Description=fsvm: run suite $FS_SUITE
	After=basic.target fsvm-tp-hold.service
	JobTimeoutSec=300
	JobTimeoutAction=poweroff-force
	SuccessAction=poweroff-force
	FailureAction=poweroff-force

	[Service]
	Type=exec
	ExecStart=/bin/bash $FS_SRC/tests/vm/suite-unit.sh
	StandardInput=null
	StandardOutput=tty
	StandardError=inherit
	TTYPath=/dev/console
	TTYReset=no
	TTYVHangup=no
	EOF
	# Emergency or rescue mode (a sysinit unit failed) would wait for a root
	# login on the console: say what failed and power off (infra) instead.
	for u in emergency rescue; do
		cat >$E/$u.service <<-EOF
		[Unit]
		Description=fsvm: boot failed ($u mode)
		DefaultDependencies=no
		SuccessAction=poweroff-force
		FailureAction=poweroff-force

		[Service]
		Type=oneshot
		ExecStart=-/bin/sh -c 'echo "fsvm-init: FATAL: boot failed, $u mode"; systemctl --no-pager --failed'
		StandardOutput=tty
		TTYPath=/dev/console
		EOF
	done

	mount --move /dev $N/dev
	mount --move /sys $N/sys
	mount --move /proc $N/proc
	log "switching to systemd (uptime $(cut -d' ' -f1 $N/proc/uptime) s)"
	exec switch_root $N /lib/systemd/systemd
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
grep -qw fsvm.init=systemd /proc/cmdline && boot_systemd
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

sh -c "$(heartbeat_loop $FSVM)" &
hb_pid=$!
echo $hb_pid >$FSVM/heartbeat.pid # for the harness's selftest-stall

[ -r $FSVM/env ] || fatal "no env file on the run share"
. $FSVM/env
mkdir -p $FSVM/out
save_kallsyms $FSVM

# The suite sees nothing of the initramfs environment: a sane PATH plus the
# FS_* variables the host wrote to run/env (sourced by bash, which reads the
# host's printf %q quoting back exactly).
in_chroot() {
	chroot $R /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root TERM="${FS_VM_TERM:-dumb}" LANG=C.UTF-8 \
		/bin/bash -c 'set -a; . /run/fsvm/env; set +a; cd /tmp; exec "$@"' fsvm "$@"
}

hold=$(tp_hold $R)
if [ -n "$hold" ]; then
	in_chroot $hold || log "tracepoint hold failed: fairshared's attach may patch kernel text"
fi

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
