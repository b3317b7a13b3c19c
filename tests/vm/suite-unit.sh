#!/bin/bash
# ExecStart of fsvm-suite.service: the suite runner of a guest that booted
# systemd as PID 1 ("# vm: systemd" suites; init.sh writes the unit). It does
# what init.sh does after its chroot: runs the suite named in /run/fsvm/env
# with a clean environment (PATH + the FS_* variables), its output to the
# console and result.log, its status to result.rc and to the isa-debug-exit
# port (qemu exits with 2*rc+1 at once). The "fsvm-init:" lines are the ones
# tests/vm/run reads boot and suite times from.
RUN=/run/fsvm
set -a
. $RUN/env
set +a

log() { echo "fsvm-init: $*"; }
uptime_s() {
	local u
	read -r u _ </proc/uptime
	echo "$u"
}

in_env() {
	env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root TERM="${FS_VM_TERM:-dumb}" LANG=C.UTF-8 \
		/bin/bash -c 'set -a; . /run/fsvm/env; set +a; cd /tmp; exec "$@"' fsvm "$@"
}

shell() {
	log "shell ($1)"
	in_env setsid -c /bin/bash -i </dev/ttyS0 >/dev/ttyS0 2>&1
}

[[ ${FS_VM_SHELL:-} == before ]] && shell "exit to run the suite"
log "running $FS_SUITE under systemd (uptime $(uptime_s) s)"
in_env /bin/bash "$FS_SRC/tests/vm/suites/$FS_SUITE.sh" </dev/null 2>&1 | tee $RUN/result.log
rc=${PIPESTATUS[0]}
log "suite $FS_SUITE exited $rc (uptime $(uptime_s) s)"
[[ ${FS_VM_SHELL:-} == after ]] && shell "exit to finish"

echo "$rc" >$RUN/result.rc
sync
((rc > 127)) && rc=127 # qemu's status is (rc << 1) | 1, 8 bits
printf "\\$(printf %o "$rc")" | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
# Still here: no isa-debug-exit. The unit's SuccessAction/FailureAction power
# off, and qemu's even status tells the host there was no verdict.
log "isa-debug-exit did not end the VM"
exit 1
