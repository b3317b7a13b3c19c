# Shell library for VM suites (tests/vm/suites/*.sh). Source it first:
#
#   . "$FS_SRC/tests/vm/lib.sh"
#
# Suites run as root inside the VM, chrooted into the host's root (read-only),
# with /tmp and /run as tmpfs and a pure cgroup v2 hierarchy at /sys/fs/cgroup.
# Environment from the harness: FS_SRC (repo), FS_BUILD (build dir), FS_OUT
# (artifact dir, copied back to the host), FS_SUITE, FS_VM_DISK_BPS (scratch
# disk capacity qemu enforces), FS_VM_DISK_SIZE, FS_VM_CPUS, FS_VM_MEM_MB.
#
# Output protocol: one `ok N - name` / `not ok N - name` line per check, then
# `N passed, N failed` alone on the last line (t_done), exit 1 on any failure.
# Numbers worth keeping go to $FS_OUT/measurements.tsv (record).

set -uo pipefail

# run -e FS_TRACE=1 SUITE: trace every command with a timestamp.
if [[ -n ${FS_TRACE:-} ]]; then
	PS4='+ ${EPOCHREALTIME} ${BASH_SOURCE##*/}:${LINENO}: '
	set -x
fi

CG_ROOT=${CG_ROOT:-/sys/fs/cgroup}
FS_OUT=${FS_OUT:-/tmp/fsvm-out}
mkdir -p "$FS_OUT"

T_N=0
T_PASS=0
T_FAIL=0

# --- reporting -------------------------------------------------------------

t_note() { echo "# $*"; }

# t_section TITLE: a heading with the time since boot, to see where time goes.
t_section() { echo "# --- $* (t=$(now) s)"; }

t_ok() {
	T_N=$((T_N + 1))
	T_PASS=$((T_PASS + 1))
	echo "ok $T_N - $*"
}

t_fail() {
	T_N=$((T_N + 1))
	T_FAIL=$((T_FAIL + 1))
	echo "not ok $T_N - $*"
}

# t_check NAME CMD...: ok if CMD succeeds (its output is shown as notes).
t_check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		t_ok "$name"
	else
		t_fail "$name (failed: $*)"
	fi
	[[ -n $out ]] && sed 's/^/#   /' <<<"$out"
	return 0
}

# t_skip NAME REASON: counts as passed, visibly marked.
t_skip() { t_ok "$1 # SKIP $2"; }

# t_done: final summary line; exit status 1 if anything failed.
t_done() {
	echo "$T_PASS passed, $T_FAIL failed"
	[[ $T_FAIL -eq 0 && $T_N -gt 0 ]]
	exit $?
}

# record KEY VALUE: keep a measured number (tab-separated, one per line)
# and show it as a note; record_only keeps it without the note.
record_only() { printf '%s\t%s\t%s\n' "${FS_SUITE:-?}" "$1" "$2" >>"$FS_OUT/measurements.tsv"; }
record() {
	record_only "$1" "$2"
	t_note "$1 = $2"
}

# --- assertions (numbers may be fractional) --------------------------------

# Exec is the slow part of a suite (0.1-0.5 s per program started from the
# 9p root under TCG), so the helpers that run often are bash builtins only.

# _fx NUM: NUM as an integer count of millionths (accepts 1.5, 2e+07, -3);
# fails on anything that is not a number.
_fx() {
	local v sign=''
	[[ $1 =~ ^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$ ]] || return 1
	printf -v v '%.6f' "$1" 2>/dev/null || return 1
	[[ $v == -* ]] && sign=- v=${v#-}
	v=${v/./}
	echo "$sign$((10#$v))"
}

# _cmp A B OP: numeric comparison (OP: <= >= < > ==); false if either side
# is not a number (an empty measurement must not pass an upper bound).
_cmp() {
	local a b
	a=$(_fx "$1") && b=$(_fx "$2") || return 1
	(("$a $3 $b"))
}

# assert_le NAME ACTUAL LIMIT [UNIT]
assert_le() {
	if _cmp "$2" "$3" '<='; then t_ok "$1: $2 <= $3${4:+ $4}"; else t_fail "$1: $2 > $3${4:+ $4}"; fi
}

# assert_ge NAME ACTUAL LIMIT [UNIT]
assert_ge() {
	if _cmp "$2" "$3" '>='; then t_ok "$1: $2 >= $3${4:+ $4}"; else t_fail "$1: $2 < $3${4:+ $4}"; fi
}

# assert_between NAME ACTUAL LO HI [UNIT]
assert_between() {
	if _cmp "$2" "$3" '>=' && _cmp "$2" "$4" '<='; then
		t_ok "$1: $2 in [$3, $4]${5:+ $5}"
	else
		t_fail "$1: $2 not in [$3, $4]${5:+ $5}"
	fi
}

# assert_near NAME ACTUAL EXPECTED REL_TOL: |actual/expected - 1| <= tol.
assert_near() {
	local lo hi
	lo=$(calc "$3 * (1 - $4)")
	hi=$(calc "$3 * (1 + $4)")
	assert_between "$1 (expect $3 +-$(calc "$4 * 100")%)" "$2" "$lo" "$hi"
}

# assert_eq NAME ACTUAL EXPECTED
assert_eq() {
	if [[ $2 == "$3" ]]; then t_ok "$1: $2"; else t_fail "$1: got '$2', want '$3'"; fi
}

# t_tp_hold: the boot's tracepoint hold (init.sh, tp_hold) is in place when
# this build has fs-tp-hold: its four links pinned, its programs loaded.
t_tp_hold() {
	[[ -x $FS_BUILD/bpf/fs-tp-hold && ${FS_VM_TP_HOLD:-1} != 0 ]] || return 0
	assert_eq "tracepoint hold: 4 links pinned" \
		"$(find /sys/fs/bpf/fsvm-hold -mindepth 1 2>/dev/null | wc -l)" 4
	command -v bpftool >/dev/null &&
		assert_eq "tracepoint hold: 4 programs loaded" \
			"$(bpftool prog show | grep -cE 'name fs_hold_(switch|bio)_')" 4
}

# calc EXPR: floating-point arithmetic (awk), 4 significant digits.
calc() { awk "BEGIN { v = $*; printf \"%.4g\n\", v }"; }

# now: seconds since boot, fractional (monotonic enough for intervals).
now() {
	local u
	read -r u _ </proc/uptime
	echo "$u"
}

# --- waiting ---------------------------------------------------------------

# wait_for TIMEOUT_S CMD...: poll CMD (a command or shell function) every
# 0.1 s; 0 once it succeeds, 1 on timeout.
wait_for() {
	local deadline
	deadline=$(_fx "$(now)") || return 1
	deadline=$((deadline + $(_fx "$1")))
	shift
	until "$@" >/dev/null 2>&1; do
		(($(_fx "$(now)") >= deadline)) && return 1
		_nap
	done
}

# _nap: sleep 0.1 s without starting a program (read times out on a pipe
# that never gets data).
exec {_NAP_FD}<> <(:)
_nap() { read -rt 0.1 -u "$_NAP_FD" _ || :; }

# wait_file TIMEOUT_S PATH: wait until PATH exists.
wait_file() { wait_for "$1" test -e "$2"; }

# --- cgroups ---------------------------------------------------------------
# Cgroup names are paths relative to $CG_ROOT, e.g. "fstest/a".

cg_path() { echo "$CG_ROOT/$1"; }

# cg_create NAME [CONTROLLERS]: mkdir -p, enabling CONTROLLERS (default
# "+cpu +memory +io") in the subtree_control of every ancestor on the way.
cg_create() {
	local ctl=${2:-+cpu +memory +io} dir=$CG_ROOT part
	local -a parts
	IFS=/ read -ra parts <<<"$1"
	for part in "${parts[@]}"; do
		echo "$ctl" >"$dir/cgroup.subtree_control" || return 1
		dir=$dir/$part
		mkdir -p "$dir" || return 1
	done
}

# cg_remove NAME: kill everything in the subtree and remove it, leaves first.
cg_remove() {
	local top d
	top=$(cg_path "$1")
	[[ -d $top ]] || return 0
	[[ -e $top/cgroup.kill ]] && echo 1 >"$top/cgroup.kill"
	wait_for 5 grep -qx 'populated 0' "$top/cgroup.events"
	_cg_reap "$1"
	find "$top" -depth -type d | while read -r d; do rmdir "$d"; done
	[[ ! -d $top ]]
}

# cg_set NAME FILE VALUE / cg_get NAME FILE
cg_set() { echo "$3" >"$(cg_path "$1")/$2"; }
cg_get() { cat "$(cg_path "$1")/$2"; }

# cg_slurp VAR FILE: all of FILE into VAR, read to its end in one go; 1 if
# it cannot be opened. Parse VAR, not the file: a `while read` loop over a
# cgroup or proc file seeks back after every line (bash gives back what it
# read past the newline), and the kernel then generates the file again from
# that offset, so a counter that grew in between garbles the line. Seen in
# the demo: io.stat's "rbytes=N" read as "wbytes=rbytes=N".
cg_slurp() { { IFS= read -r -d '' "$1" || :; } <"$2"; }

# cg_stat NAME FILE KEY: value of "KEY VALUE" in a flat-keyed file
# (cpu.stat usage_usec, memory.events oom_kill, ...). Missing key: empty, 1.
cg_stat() {
	local k v text
	cg_slurp text "$(cg_path "$1")/$2" || return 1
	while read -r k v; do
		[[ $k == "$3" ]] && { echo "$v"; return 0; }
	done <<<"$text"
	return 1
}

# cg_io_stat NAME FIELD [MAJ:MIN]: one field (rbytes, wbytes, rios, wios, ...)
# of io.stat for a device (default the scratch disk); 0 if no line yet.
cg_io_stat() {
	local dev=${3:-$(scratch_dev)}
	awk -v d="$dev" -v k="$2" '$1 == d { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) v = kv[2] } }
		END { print v + 0 }' "$(cg_path "$1")/io.stat"
}

# _in_cg DIR CMD...: (in a subshell) join the cgroup, then run CMD; a
# program is exec-ed so that it is the process left in the cgroup, a shell
# function is called.
_in_cg() {
	echo "$BASHPID" >"$1/cgroup.procs" || exit 125
	shift
	[[ $(type -t "$1") == file ]] && exec "$@"
	"$@"
}

# cg_run NAME CMD...: run CMD (program or function) in the cgroup, in the
# foreground; returns its status. CMD keeps our stderr (fd 3 -> 2); the
# shell's own "Killed" notice for it is dropped (expected in OOM tests).
cg_run() { { (_in_cg "$(cg_path "$1")" "${@:2}" 2>&3 3>&-); } 3>&2 2>/dev/null; }

# cg_spawn NAME CMD...: start CMD in the cgroup in the background; CG_PID is
# a watcher in the caller's cgroup that lives exactly as long as CMD and
# exits with its status (so killing the cgroup prints no job notice).
declare -A CG_JOBS=()
cg_spawn() {
	(cg_run "$@") &
	CG_PID=$!
	CG_JOBS[$1]+=" $CG_PID"
}

# _cg_reap NAME: collect our background jobs in NAME and below, silently
# (bash would otherwise print "Killed" for each).
_cg_reap() {
	local n p
	for n in "${!CG_JOBS[@]}"; do
		[[ $n == "$1" || $n == "$1"/* ]] || continue
		for p in ${CG_JOBS[$n]}; do { wait "$p"; } 2>/dev/null; done
		unset "CG_JOBS[$n]"
	done
}

# cg_kill NAME: kill every process in the subtree and wait until it is empty.
cg_kill() {
	local cg
	cg=$(cg_path "$1")
	echo 1 >"$cg/cgroup.kill"
	wait_for 5 grep -qx 'populated 0' "$cg/cgroup.events"
	_cg_reap "$1"
}

# cg_cpu_shares SECONDS NAME...: CPU use of each cgroup over the interval, in
# cores (delta usage_usec / delta wall time), one number per line.
cg_cpu_shares() {
	local secs=$1 i t0 t1 c
	shift
	local -a u0=() u1=()
	t0=${EPOCHREALTIME/./}
	for i in "$@"; do u0+=("$(cg_stat "$i" cpu.stat usage_usec)"); done
	sleep "$secs"
	t1=${EPOCHREALTIME/./}
	for i in "$@"; do u1+=("$(cg_stat "$i" cpu.stat usage_usec)"); done
	for i in "${!u0[@]}"; do
		# cores in ten-thousandths, printed as a decimal
		c=$(((u1[i] - u0[i]) * 10000 / (t1 - t0)))
		printf '%d.%04d\n' $((c / 10000)) $((c % 10000))
	done
}

# cg_cpu_share SECONDS NAME: one cgroup's CPU use in cores.
cg_cpu_share() { cg_cpu_shares "$1" "$2"; }

# --- workloads -------------------------------------------------------------

# burn_cpu SECONDS [CPU]: one busy thread, optionally pinned to CPU
# (stress-ng if present, else a shell loop).
burn_cpu() {
	local -a cmd=(timeout "$1" sh -c 'while :; do :; done')
	command -v stress-ng >/dev/null &&
		cmd=(stress-ng --cpu 1 --cpu-method loop --timeout "${1}s" --quiet)
	[[ -n ${2:-} ]] && cmd=(taskset -c "$2" "${cmd[@]}")
	"${cmd[@]}"
}

# $GROW_MEM MIB [PROGRESS_FILE]: allocate and touch MIB MiB (see bin/grow-mem).
# shellcheck disable=SC2034 # used by suites
GROW_MEM=$FS_SRC/tests/vm/bin/grow-mem

# --- the scratch disk (virtio, raw, throttled by qemu to FS_VM_DISK_BPS) ----

SCRATCH=/dev/vda
scratch_dev() { cat /sys/block/vda/dev; }

# timed_dd ARGS...: run dd, print the seconds it took by its own clock
# (program start-up, slow under TCG, is not included).
timed_dd() {
	local out
	out=$(dd "$@" 2>&1) || { echo "$out" >&2; return 1; }
	[[ $out =~ copied,\ ([0-9.eE+-]+)\ s, ]] || { echo "$out" >&2; return 1; }
	echo "${BASH_REMATCH[1]}"
}

# disk_bps write|read MIB: throughput of MIB MiB of O_DIRECT I/O on the
# scratch disk at queue depth 8, in bytes/s, as timed by fio itself: timing
# from outside would include program start-up, which takes seconds on a
# loaded host under TCG. One dd (queue depth 1) is latency-bound and reaches
# only 65-90% of the capacity; dd with big blocks overshoots on reads.
disk_bps() {
	# terse v3: field 7 is read bandwidth, field 48 write bandwidth, in KiB/s
	fio --name=cap --filename="$SCRATCH" --rw="$1" --bs=1M --size="${2}M" \
		--direct=1 --ioengine=libaio --iodepth=8 \
		--output-format=terse --terse-version=3 |
		awk -F';' -v f="$([[ $1 == write ]] && echo 48 || echo 7)" \
			'NF > 48 { print $f * 1024; ok = 1 } END { exit !ok }'
}

# --- background processes (daemons under test) ------------------------------
# bg_start NAME CMD...: start CMD in the root cgroup (outside every tenant),
# output to $FS_OUT/NAME.log; bg_stop NAME stops it (TERM, then KILL after 5 s)
# and returns its exit status. Anything still running at exit is stopped.

declare -A BG_PIDS=()

bg_start() {
	local name=$1
	shift
	(exec "$@" >"$FS_OUT/$name.log" 2>&1) &
	BG_PIDS[$name]=$!
}

# alive PID: running and not a zombie (kill -0 succeeds on zombies).
alive() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n $st && ${st:0:1} != Z ]]
}
dead() { ! alive "$1"; }

bg_stop() {
	local pid=${BG_PIDS[$1]:-} rc
	[[ -n $pid ]] || return 0
	kill -TERM "$pid" 2>/dev/null
	wait_for 5 dead "$pid" || kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	unset "BG_PIDS[$1]"
	return $rc
}

_bg_cleanup() {
	local n
	for n in "${!BG_PIDS[@]}"; do bg_stop "$n"; done
}
trap _bg_cleanup EXIT

# fs_bin NAME: path of a project binary in the build dir (fails if absent).
fs_bin() {
	local p
	for p in "$FS_BUILD/agent/$1" "$FS_BUILD/$1" "$FS_BUILD/bpf/$1" "$FS_BUILD/tests/$1"; do
		[[ -x $p ]] && { echo "$p"; return 0; }
	done
	echo "fs_bin: $1 not found under $FS_BUILD" >&2
	return 1
}
