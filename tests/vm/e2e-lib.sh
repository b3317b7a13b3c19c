# Helpers for the end-to-end suites (tests/vm/suites/e2e-*.sh, demo.sh):
# fairshared under test, its per-period debug log, and measured shares.
# Source after lib.sh:
#
#   . "$FS_SRC/tests/vm/lib.sh"
#   . "$FS_SRC/tests/vm/e2e-lib.sh"
#   trap e2e_cleanup EXIT
#   e2e_setup
#
# The daemon logs at debug level, per period, a status line
#   fairshared: debug: period N: MODE, POLICY, bottlenecks: ..., tenants ...
# and one line per tenant (plan_fmt_summary):
#   fairshared: debug: tenant=a mode=limits x=0.6667 share=... bottleneck=cpu
#     gap=0 write=1 cpu.max="66667 100000" cpu.weight=200 io.weight=200
#     memory.high=max memory.max=max io.max="254:0 rbps=max wbps=max"
#     cpu=0.667/0.667 memory=12.0M/max io.disk0.rbps=... probe=... est=...
# The suites read the computed allocation from these lines.
#
# Under TCG on a shared host every exec costs 0.3-1 s, and the suite's own
# processes and the daemon (about 0.1 core at 300 ms periods) would compete
# with the tenants for the CPU being measured. So with 2+ vCPUs the tenants
# get CPU 1 (cpuset.cpus on $E2E_TOP; configs say cpu = 1) and the suite
# and the daemon CPU 0 (cgroup $E2E_CTL): measured shares are shares of a
# CPU that only tenants use. Helpers avoid execs in loops (e2e_sleep).

E2E_STATE=${E2E_STATE:-/run/fse2e} # state_dir and socket of the daemon under test
E2E_TOP=${E2E_TOP:-fse2e}      # every tenant cgroup lives below /sys/fs/cgroup/fse2e
E2E_CTL=${E2E_CTL:-fse2e-ctl}   # the suite shell and the daemon
E2E_INTERVAL=0.5     # seconds, set by e2e_conf
E2E_TENANT_CPUS=1
MiB=1048576

# e2e_sleep SECONDS: sleep without an exec (read -t on a pipe nobody writes).
exec {E2E_SLEEP_FD}<> <(:)
e2e_sleep() { read -rt "$1" -u "$E2E_SLEEP_FD" || :; }

# e2e_setup: the $E2E_TOP subtree with +cpu +memory +io (+cpuset) and the
# suite moved into $E2E_CTL. Call once, first.
e2e_setup() {
	mkdir -p "$E2E_STATE"
	if ((${FS_VM_CPUS:-2} >= 2)); then
		cg_create "$E2E_TOP" "+cpu +memory +io +cpuset" || return 1
		cg_set "$E2E_TOP" cpuset.cpus "$E2E_TENANT_CPUS" || return 1
		mkdir -p "$CG_ROOT/$E2E_CTL" &&
			cg_set "$E2E_CTL" cpuset.cpus 0 &&
			echo $$ >"$CG_ROOT/$E2E_CTL/cgroup.procs" || return 1
	else
		E2E_TENANT_CPUS=0
		cg_create "$E2E_TOP" || return 1
	fi
}

# e2e_cleanup: stop every daemon we started, remove the tenants and the
# state dir; the suite shell goes back to the root cgroup.
e2e_cleanup() {
	_bg_cleanup
	cg_remove "$E2E_TOP" 2>/dev/null
	if [[ -d $CG_ROOT/$E2E_CTL ]]; then
		echo $$ >"$CG_ROOT/cgroup.procs"
		rmdir "$CG_ROOT/$E2E_CTL"
	fi
	rm -rf "$E2E_STATE"
}

# e2e_tenants NAME...: create $E2E_TOP/NAME for each.
e2e_tenants() {
	local n
	for n in "$@"; do cg_create "$E2E_TOP/$n" || return 1; done
}

# --- the daemon --------------------------------------------------------------

e2e_fsd() { fs_bin fairshared; }

# e2e_conf FILE INTERVAL_S POLICY [ENFORCE] [ON_EXIT]: writes [agent] (state
# and socket under $E2E_STATE) and "[resources] cpu = 1" (the tenants' CPU);
# the caller appends more resource lines, then tenants (e2e_tenant).
e2e_conf() {
	E2E_INTERVAL=$2
	cat >"$1" <<EOF
[agent]
interval = ${2}s
policy = $3
enforce = ${4:-auto}
on_exit = ${5:-restore}
cgroup_root = $CG_ROOT
state_dir = $E2E_STATE
socket = $E2E_STATE/control.sock

[resources]
cpu = 1
EOF
}

# e2e_tenant FILE NAME WEIGHT [KEY LINES...]: [tenant.NAME], cgroup $E2E_TOP/NAME.
e2e_tenant() {
	local f=$1 name=$2 w=$3 l
	shift 3
	printf '\n[tenant.%s]\ncgroup = %s\nweight = %s\n' "$name" "$E2E_TOP/$name" "$w" >>"$f"
	for l in "$@"; do printf '%s\n' "$l" >>"$f"; done
}

# fsd_start NAME CONF [ARGS...]: start fairshared (debug log in $FS_OUT/NAME.log).
fsd_start() {
	local name=$1 conf=$2 bin
	shift 2
	bin=$(e2e_fsd) || return 1
	bg_start "$name" "$bin" --config "$conf" --log-level debug "$@"
}

# fsd_stop NAME: TERM the daemon, return its exit status.
fsd_stop() { bg_stop "$1"; }

fsd_log() { echo "$FS_OUT/$1.log"; }

# fsd_period NAME: number of the last completed period (0 before the first).
fsd_period() {
	local n
	n=$(sed -n 's/^fairshared: debug: period \([0-9]*\):.*/\1/p' "$(fsd_log "$1")" 2>/dev/null | tail -n 1)
	echo "${n:-0}"
}

# fsd_wait_periods NAME N [TIMEOUT_S]: wait until N more periods have
# completed (sleeps N intervals first, then polls each interval).
fsd_wait_periods() {
	local target deadline
	target=$(($(fsd_period "$1") + $2))
	deadline=$(calc "$(now) + ${3:-60}")
	e2e_sleep "$(calc "$2 * $E2E_INTERVAL")"
	until (($(fsd_period "$1") >= target)); do
		_cmp "$(now)" "$deadline" '>=' && return 1
		e2e_sleep "$E2E_INTERVAL"
	done
}

# fsd_wait_steady NAME PERIODS TIMEOUT_S TENANT:RES...: wait until each
# listed limit has been finite and within 10 % of its latest value for the
# last PERIODS periods (the 10 % of fsd_moves' steady outputs); 0 then, 1 on
# timeout (and with no TENANT:RES). FSD_STEADY: the last period logged when
# it returned 0, else empty.
# Not a fixed number of periods: a controller that settles late is then
# measured mid-way. e2e-compare (b)'s limits settle at period 27-39 here,
# and one CI run's window after period 45 measured the deep queue at 0.54
# of the disk against its final limit of 0.49. Not 5 %: (c)'s CPU limits
# step by 3-7 % with a busy host (0.267 <-> 0.286), which held one run of
# three beside stress-ng --cpu 2 from period 20 to 46.
fsd_wait_steady() {
	local name=$1 k=$2 deadline
	deadline=$(calc "$(now) + $3")
	shift 3
	FSD_STEADY=
	until _fsd_steady "$name" "$k" "$@"; do
		_cmp "$(now)" "$deadline" '>=' && return 1
		e2e_sleep "$E2E_INTERVAL"
	done
	FSD_STEADY=$(fsd_period "$name")
}
_fsd_steady() {
	# One awk over the log per poll: a program started under TCG costs
	# 0.1-0.5 s (lib.sh). A fsd_series pipeline per key (three programs a
	# key) lagged: beside stress-ng, a poll at period 65 saw limits steady
	# since period 42.
	awk -v k="$2" -v keys="${*:3}" "$_FSD_AMOUNT_AWK"'
		BEGIN { if (!(nk = split(keys, key, " "))) exit 1
			for (i = 1; i <= nk; i++) {
				split(key[i], tr, ":")
				t[i] = "fairshared: debug: tenant=" tr[1] " "; r[i] = " " tr[2] "="
			} }
		/^fairshared: debug: period [0-9]+:/ { next }
		{ for (i = 1; i <= nk; i++)
			if (index($0, t[i]) == 1 && (j = index($0, r[i]))) {
				v = substr($0, j + length(r[i])); sub(/ .*/, "", v)
				lim[i, ++c[i]] = split(v, al, "/") == 2 ? n(al[2]) : -1
			} }
		END { for (i = 1; i <= nk; i++) {
				if (c[i] < k) exit 1
				last = lim[i, c[i]]
				for (j = c[i] - k + 1; j <= c[i]; j++)
					if (lim[i, j] <= 0 || lim[i, j] > 1.1 * last || lim[i, j] < 0.9 * last) exit 1
			} }' "$(fsd_log "$1")"
}

# fsd_line NAME TENANT [PERIOD]: the tenant's line of a period (default the
# last complete one). A log that a restarted daemon appends to (a systemd
# unit's) counts periods from 1 again: the last period of that number is
# the one meant.
fsd_line() {
	local p=${3:-$(fsd_period "$1")}
	awk -v p="fairshared: debug: period $p:" -v t="fairshared: debug: tenant=$2 " '
		/^fairshared: debug: period [0-9]+:/ { on = index($0, p) == 1; if (on) got = ""; next }
		on && got == "" && index($0, t) == 1 { got = $0 }
		END { if (got != "") print got }' "$(fsd_log "$1")"
}

# fsd_status NAME: the status line of the last complete period.
fsd_status() { grep "^fairshared: debug: period $(fsd_period "$1"):" "$(fsd_log "$1")" | tail -n 1; }

# kv LINE KEY: the value of KEY=VALUE (or KEY="VALUE") in a log line.
kv() {
	local re=${2//./\\.}
	if [[ $1 =~ (^|[ ])$re=\"([^\"]*)\" ]]; then
		echo "${BASH_REMATCH[2]}"
	elif [[ $1 =~ (^|[ ])$re=([^ ]*) ]]; then
		echo "${BASH_REMATCH[2]}"
	else
		return 1
	fi
}

# num AMOUNT: a summary amount ("0.667", "12.0M", "1.50G", "640K", "max") as
# a plain number (bytes for sizes, MiB = 2^20 as plan.c prints them).
num() {
	case $1 in
	max) echo max ;;
	*G) calc "${1%G} * 1073741824" ;;
	*M) calc "${1%M} * 1048576" ;;
	*K) calc "${1%K} * 1024" ;;
	*) echo "$1" ;;
	esac
}

# fsd_alloc LINE RES / fsd_limit LINE RES: a resource's allocation / limit
# ("cpu=ALLOC/LIMIT") from a tenant line.
fsd_alloc() { local v; v=$(kv "$1" "$2") && num "${v%/*}"; }
fsd_limit() { local v; v=$(kv "$1" "$2") && num "${v#*/}"; }

# e2e_dump NAME [LINES]: the end of the daemon's log as notes.
e2e_dump() { tail -n "${2:-20}" "$(fsd_log "$1")" | sed 's/^/#   /'; }

# --- measurement -------------------------------------------------------------

# _snap NAME: E2E_U (cpu.stat usage_usec) and E2E_B (scratch disk rbytes +
# wbytes) of $E2E_TOP/NAME, read with builtins only: no fork, no exec, so a
# window's samples of several tenants are taken within microseconds.
_snap() {
	local dir=$CG_ROOT/$E2E_TOP/$1 k v rest f text
	E2E_U=0 E2E_B=0
	cg_slurp text "$dir/cpu.stat" # one read: see cg_slurp (lib.sh)
	while read -r k v rest; do
		[[ $k == usage_usec ]] && { E2E_U=$v; break; }
	done <<<"$text"
	cg_slurp text "$dir/io.stat"
	while read -r k rest; do
		[[ $k == "$E2E_DEV" ]] || continue
		for f in $rest; do
			case $f in rbytes=* | wbytes=*) E2E_B=$((E2E_B + ${f#*=})) ;; esac
		done
	done <<<"$text"
}
E2E_DEV=$(cat /sys/block/vda/dev 2>/dev/null)

# e2e_wait_io TIMEOUT_S NAME...: wait until each tenant ($E2E_TOP/NAME) has
# moved at least 4 MiB on the scratch disk (io.stat rbytes + wbytes). fio's
# start-up takes seconds under TCG, and tens of them when its cgroup's CPU
# is held and the host is busy (e2e-njc beside stress-ng --cpu 2: c's fio,
# beside a CPU hog in a 1/3 core, wrote nothing for its first 48 periods,
# 14 s); a window that opens before then measures another mix.
e2e_wait_io() { wait_for "$1" _io_moved "${@:2}"; }
_io_moved() {
	local n
	for n in "$@"; do
		_snap "$n" && ((E2E_B >= 4 << 20)) || return 1
	done
}

# e2e_measure SECONDS NAME...: per tenant ($E2E_TOP/NAME) one line "CORES
# IO_BPS": cpu.stat usage_usec and io.stat rbytes+wbytes on the scratch disk
# over the window.
e2e_measure() {
	local secs=$1 n t0 t1 i
	shift
	local -a u0=() u1=() b0=() b1=()
	read -r t0 _ </proc/uptime
	for n in "$@"; do
		_snap "$n"
		u0+=("$E2E_U") b0+=("$E2E_B")
	done
	e2e_sleep "$secs"
	read -r t1 _ </proc/uptime
	for n in "$@"; do
		_snap "$n"
		u1+=("$E2E_U") b1+=("$E2E_B")
	done
	awk -v t="$t1" -v s="$t0" -v u0="${u0[*]}" -v u1="${u1[*]}" -v b0="${b0[*]}" -v b1="${b1[*]}" '
		BEGIN { n = split(u0, a); split(u1, b); split(b0, c); split(b1, d); t -= s
			for (i = 1; i <= n; i++) printf "%.4f %.0f\n", (b[i] - a[i]) / 1e6 / t, (d[i] - c[i]) / t }'
}

# --- workloads (run them with cg_spawn $E2E_TOP/NAME ...) --------------------

# cpu_load N SECONDS: N busy threads (stress-ng).
cpu_load() { exec stress-ng --cpu "$1" --cpu-method loop --timeout "${2}s" --quiet; }

# fio_until SECONDS ARGS...: one fio run (time_based) for SECONDS, started
# again for the time left if it fails: in a TCG guest on a busy host a job
# can miss fio's own start-up deadline ("fio: job startup hung? exiting",
# e2e-mix beside stress-ng --cpu 2: c's writer never wrote, and the suite
# measured a mix without it). One run otherwise (fio's start-up costs
# seconds under TCG).
fio_until() {
	local end=$((SECONDS + $1)) left
	shift
	while left=$((end - SECONDS)) && ((left > 0)); do
		fio "$@" --time_based --runtime="$left" --output=/dev/null && return 0
		echo "fio_until: fio exited $?, started again for ${left}s" >&2
		sleep 1
	done
}

# io_load JOBS IODEPTH SECONDS OFFSET_MIB [BS]: fio, O_DIRECT writes of BS
# (default 1M) blocks, JOBS processes at IODEPTH (libaio), each looping over
# its own 16 MiB slice of the scratch disk from OFFSET_MIB, for SECONDS.
io_load() {
	fio_until "$3" --name=load --filename="$SCRATCH" --rw=write --bs="${5:-1M}" --direct=1 \
		--ioengine=libaio --iodepth="$2" --numjobs="$1" --size=16M --offset="${4}M" \
		--offset_increment=16M
}

# rand_io RW IODEPTH SECONDS OFFSET_MIB: fio random O_DIRECT I/O (RW: randread
# or randwrite) of $RAND_BS blocks (default 256 KiB) over a 64 MiB slice of
# the scratch disk at IODEPTH (libaio).
rand_io() {
	fio_until "$3" --name=load --filename="$SCRATCH" --rw="$1" --bs=${RAND_BS:-256k} \
		--direct=1 --ioengine=libaio --iodepth="$2" --size=64M --offset="${4}M"
}

# e2e_cpu_disk_mix SECONDS: the two-bottleneck mix of e2e tests 5 and 8 in
# tenants a, b, c under E2E_TOP: a CPU only (2 threads), b disk only (fio,
# 2 jobs x iodepth 4), c both (1 thread + fio 1 job x iodepth 4).
e2e_cpu_disk_mix() {
	cg_spawn "$E2E_TOP/a" cpu_load 2 "$1"
	cg_spawn "$E2E_TOP/b" io_load 2 4 "$1" 0
	cg_spawn "$E2E_TOP/c" cpu_load 1 "$1"
	cg_spawn "$E2E_TOP/c" io_load 1 4 "$1" 64
}

# n(AMOUNT) in awk: num (above) for the programs that read the log, "max"
# as -1.
_FSD_AMOUNT_AWK='
	function n(s) { if (s == "max") return -1
		if (s ~ /G$/) return s * 1073741824; if (s ~ /M$/) return s * 1048576
		if (s ~ /K$/) return s * 1024; return s + 0 }'

# fsd_series NAME TENANT RES: "PERIOD ALLOC LIMIT" for every logged period
# (sizes in bytes, "max" as -1), to find when something happened. The
# tenant lines of period N follow its status line "period N:".
fsd_series() {
	awk -v t="fairshared: debug: tenant=$2 " -v r=" $3=" "$_FSD_AMOUNT_AWK"'
		/^fairshared: debug: period [0-9]+:/ { p = $4 + 0 }
		index($0, t) == 1 && (i = index($0, r)) {
			v = substr($0, i + length(r)); sub(/ .*/, "", v); split(v, al, "/")
			print p, n(al[1]), n(al[2]) }' "$(fsd_log "$1")"
}

# fsd_moves NAME TENANT RES AFTER: "BIG ALL": of the period-to-period
# changes of RES's limit after period AFTER (both finite), how many moved
# by more than 10 % (issue 14: steady outputs).
fsd_moves() {
	fsd_series "$1" "$2" "$3" | awk -v a="$4" '
		$1 > a { if (seen && prev > 0 && $3 > 0) { all++; d = ($3 - prev) / prev; if (d > 0.1 || d < -0.1) big++ }
			prev = $3; seen = 1 }
		END { print big + 0, all + 0 }'
}

# fsd_first NAME TENANT RES AFTER OP VALUE: the first period > AFTER whose
# LIMIT of RES satisfies "LIMIT OP VALUE" (max counts as infinite); empty if none.
fsd_first() {
	fsd_series "$1" "$2" "$3" | awk -v a="$4" -v v="$6" '
		{ l = $3 < 0 ? 1e300 : $3 }
		$1 > a && (l '"$5"' v) { print $1; exit }'
}

# fsd_files_match NAME TENANT FILE...: the tenant's cgroup files (cpu.max,
# cpu.weight, io.weight, memory.high, memory.max) hold the plan of one of
# the last 3 periods (files are read with builtins first, then the log: a
# period may end in between). Prints "FILES = VALUES (period P)" or the
# mismatch; status 0 on a match.
fsd_files_match() { fsd_cgroup_files_match "$1" "$2" "$E2E_TOP/$2" "${@:3}"; }

# fsd_cgroup_files_match NAME TENANT CGROUP FILE...: the same for a tenant
# whose cgroup (relative to $CG_ROOT) is not $E2E_TOP/TENANT.
fsd_cgroup_files_match() {
	local name=$1 tenant=$2 cg=$3 f v got="" want p l k
	shift 3
	for f in "$@"; do
		v=""
		read -r v <"$CG_ROOT/$cg/$f"
		[[ $f == io.weight ]] && v=${v#default }
		got+="$v;"
	done
	p=$(fsd_period "$name")
	for ((k = p; k > p - 3 && k > 0; k--)); do
		l=$(fsd_line "$name" "$tenant" "$k")
		want=""
		for f in "$@"; do want+="$(kv "$l" "$f");"; done
		if [[ $got == "$want" ]]; then
			echo "$* = $got (period $k, mode $(kv "$l" mode))"
			return 0
		fi
	done
	echo "$* = $got, but the plans of periods $((p - 2))..$p say e.g. $want"
	return 1
}
