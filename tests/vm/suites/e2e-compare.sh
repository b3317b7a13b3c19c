#!/bin/bash
# e2e test 2 (issue 7): mixes where today's knobs fail. Each scenario runs
# its loads twice: first with no daemon and plain equal cpu.weight/io.weight
# (the baseline operators have: io.weight is inert here, the disk has no
# io.cost and scheduler none), then under fairshared (psdsf, auto). Both are
# printed side by side against the entitlement-based target (derived in
# each scenario's comment: PS-DSF on the tenants' true demands, work
# conserving). Pass: under the daemon the measured shares match the
# computed limits, and the deviation from the target (sum of |measured -
# target| over the listed shares) is smaller than the baseline's.
# Shares: cpu of the 1-core tenant CPU, disk of qemu's throttled capacity.
. "$FS_SRC/tests/vm/lib.sh"
. "$FS_SRC/tests/vm/e2e-lib.sh"
trap e2e_cleanup EXIT
T=$E2E_TOP
BPS=$FS_VM_DISK_BPS
t_check "e2e cgroups" e2e_setup

# coupled_load SECONDS OFFSET_MIB: compress-then-write; its disk rate is set
# by the CPU it gets (gzip of random data, written through the page cache
# as such pipelines do; writeback is charged to the tenant's cgroup).
# Written O_DIRECT instead, each 1 MiB write waited behind b's queue and
# the pipeline used 0.35 core whatever its cpu.weight: a latency-bound
# tenant (that is scenario b), not the CPU-coupled one this scenario is about.
coupled_load() {
	local end=$((SECONDS + $1))
	while ((SECONDS < end)); do
		head -c 16M /dev/urandom | gzip -1 |
			dd of="$SCRATCH" bs=1M seek="$2" iflag=fullblock status=none
	done
}

# measure_all LABEL TENANT...: sets M[LABEL.TENANT.cpu] / M[LABEL.TENANT.io] (shares).
declare -A M=()
measure_all() {
	local label=$1 n c b
	shift
	local -a out
	mapfile -t out < <(e2e_measure 8 "$@")
	for n in "$@"; do
		read -r c b <<<"${out[0]}"
		out=("${out[@]:1}")
		M[$label.$n.cpu]=$c
		M[$label.$n.io]=$(calc "$b / $BPS")
	done
}

# scenario NAME "TENANT=WEIGHT ..." "TENANT.RES=TARGET ..." LOADS_FN
scenario() {
	local name=$1 tw=$2 targets=$3 loads=$4 n w conf tr key tgt row dev_b=0 dev_d=0 l lim p
	local -a tenants=() watch=()
	t_section "scenario $name"
	conf=$FS_OUT/e2e-compare-$name.conf
	e2e_conf "$conf" 0.3 psdsf
	echo "io.disk0 = $SCRATCH $BPS $BPS" >>"$conf"
	for n in $tw; do
		tenants+=("${n%=*}")
		e2e_tenant "$conf" "${n%=*}" "${n#*=}"
		e2e_tenants "${n%=*}"
	done
	for tr in $targets; do
		key=${tr%=*}
		l=${key#*.}
		[[ $l == io ]] && l=io.disk0.wbps
		watch+=("${key%%.*}:$l")
	done
	"$loads"
	# fio and stress-ng take seconds to start under TCG (exec over 9p).
	e2e_sleep 12
	measure_all base "${tenants[@]}"
	fsd_start "fsd-$name" "$conf"
	# The window opens once the limits it is judged against have settled
	# (fsd_wait_steady): b's do at period 27-39 (the shallow queue's
	# estimate climbs by the probe step only in periods where the disk
	# reads busy), now and then later. The loads' 150 s cover the worst
	# case: 12 + 8 + 30 + 75 + 8 s.
	fsd_wait_periods "fsd-$name" 10 30
	if fsd_wait_steady "fsd-$name" 10 75 "${watch[@]}"; then
		record "$name.steady_period" "$FSD_STEADY"
	else
		t_note "$name: limits not steady within 75 s (period $(fsd_period "fsd-$name")); measured as they are"
	fi
	measure_all fsd "${tenants[@]}"
	# The plan of the window's last period (a later one is not what the
	# window measured: beside stress-ng, a's CPU limit went 0.305 -> 0.416
	# a few periods after it), read once the daemon has stopped: it writes a
	# period's status line before the tenants' lines.
	p=$(fsd_period "fsd-$name")
	fsd_stop "fsd-$name"
	for n in "${tenants[@]}"; do
		l=$(fsd_line "fsd-$name" "$n" "$p")
		t_note "plan: ${l#*debug: }"
		PLAN[$n.cpu]=$(fsd_limit "$l" cpu)
		PLAN[$n.io]=$(fsd_limit "$l" io.disk0.wbps)
		[[ -n ${PLAN[$n.io]} && ${PLAN[$n.io]} != max ]] && PLAN[$n.io]=$(calc "${PLAN[$n.io]} / $BPS")
	done
	t_note "$(printf '%-10s %8s %9s %9s %9s' share target baseline daemon plan)"
	for tr in $targets; do
		key=${tr%=*} tgt=${tr#*=}
		row=$(printf '%-10s %8s %9s %9s %9s' "$key" "$tgt" "${M[base.$key]}" "${M[fsd.$key]}" "${PLAN[$key]}")
		t_note "$row"
		record "$name.$key" "target=$tgt baseline=${M[base.$key]} daemon=${M[fsd.$key]} plan=${PLAN[$key]}"
		dev_b=$(calc "$dev_b + sqrt((${M[base.$key]} - $tgt) ^ 2)")
		dev_d=$(calc "$dev_d + sqrt((${M[fsd.$key]} - $tgt) ^ 2)")
		lim=${PLAN[$key]}
		# A finite computed limit is what the tenant should measure (it
		# wants more: every tenant here is backlogged on what it uses).
		if [[ -z $lim ]]; then
			t_fail "$name: $key has no computed limit in the daemon's log"
		elif [[ $lim != max ]]; then
			assert_between "$name: $key measured under the daemon ~ computed limit $lim (+-0.1)" \
				"${M[fsd.$key]}" "$(calc "$lim - 0.1")" "$(calc "$lim + 0.1")"
		fi
	done
	record "$name.deviation" "baseline=$dev_b daemon=$dev_d"
	assert_le "$name: deviation from the target, daemon ($dev_d) < baseline ($dev_b)" "$dev_d" "$(calc "$dev_b * 0.999")"
	for n in "${tenants[@]}"; do cg_remove "$T/$n"; done
}
declare -A PLAN=()

# (a), a CPU-heavy, an IO-heavy and a mixed tenant at 2:1:1, moved to
# e2e-mix (issue 14): its target here assumed the IO tenant needs no CPU
# (the disk "left to b", 2/3), while fio uses 0.09-0.1 core under TCG, so
# the CPU bounds it too and PS-DSF gives it 1/3. e2e-mix measures each
# tenant's standalone demands and asks `fairctl solve` for the target.

# (b) two IO tenants, equal entitlements, queue depth 32 vs 1: target 1/2 of
# the disk each. Baseline: the disk goes by queue depth.
loads_b() {
	cg_spawn $T/d io_load 1 32 150 0
	cg_spawn $T/e io_load 1 1 150 64
}
scenario b "d=1 e=1" "d.io=0.5 e.io=0.5" loads_b

# (c) a coupled tenant c (compress-then-write: its disk rate follows its
# CPU) next to a pure CPU tenant a and a pure IO tenant b; entitlements
# a:b:c = 1:1:2. Both a and c are CPU-dominant (gzip under TCG writes a few
# MB/s per core, far below the disk), so PS-DSF gives c 2/3 and a 1/3 of the
# CPU, and c's disk rate doubles with it; b takes the rest of the disk.
# Baseline: equal cpu.weight -> 1/2 : 1/2.
loads_c() {
	# Write back within a second, not the default 30 s: the measuring
	# window is 8 s and c's disk rate should show in it.
	echo 100 >/proc/sys/vm/dirty_expire_centisecs
	echo 50 >/proc/sys/vm/dirty_writeback_centisecs
	cg_spawn $T/a cpu_load 2 150
	cg_spawn $T/b io_load 2 4 150 0
	cg_spawn $T/c coupled_load 150 128
}
scenario c "a=1 b=1 c=2" "a.cpu=0.333 c.cpu=0.667" loads_c
t_note "c's disk rate (coupled to its CPU): baseline ${M[base.c.io]} daemon ${M[fsd.c.io]} of the disk"
record c.coupled_io "baseline=${M[base.c.io]} daemon=${M[fsd.c.io]}"
t_done
