#!/bin/bash
# The fairshare demo (tools/demo runs it on a cgroup v2 host, or in the VM):
# two workloads the kernel's defaults share unfairly, each run first under
# the defaults and then under fairshared (psdsf), on the same machine in one
# run, with the measured shares next to each tenant's entitlement and plan.
#
#   1. CPU, unequal entitlements: web (weight 3) and batch (weight 1), two
#      busy threads each on one core. The kernel splits a core between
#      cgroups equally (cpu.weight 100 each): 50/50, not 75/25.
#   2. Disk, equal entitlements: backup, a deep-queue reader (fio randread
#      iodepth 32), and db, a shallow one (iodepth 1), on FS_DEMO_DISK (read
#      only; in the VM the qemu-throttled scratch disk). The block layer
#      serves whoever queues most: backup takes ~95 % of the disk.
#
# Measured each second (cpu.stat, io.stat), the plan read from fairshared's
# per-period log; per phase a table with units and a verdict sentence, and
# the time series in $FS_OUT/demo-*.dat for tools/demo-plot.
# Asserted on each fairshared phase, over its measuring window: each
# tenant's measured share within $TOL of its planned share, and within $TOL
# of its entitlement (every tenant is backlogged, so the plan is the
# entitlement). Nothing is asserted on the kernel's defaults: they are what
# they are, the demo only shows them.
. "$FS_SRC/tests/vm/lib.sh"
E2E_TOP=${E2E_TOP:-fairshare-demo.slice}
E2E_CTL=${E2E_CTL:-fairshare-demo-ctl}
E2E_STATE=${E2E_STATE:-/run/fairshare-demo}
. "$FS_SRC/tests/vm/e2e-lib.sh"
trap 'demo_sampler_stop; e2e_cleanup' EXIT
T=$E2E_TOP
DISK=${FS_DEMO_DISK:-}
if [[ -z $DISK && $FS_SUITE == demo && -b /dev/vda ]]; then DISK=/dev/vda; fi
BPS=${FS_DEMO_DISK_BPS:-${FS_VM_DISK_BPS:-}}
WINDOW=${FS_DEMO_WINDOW:-12} # seconds measured per phase
TOL=0.10
if [[ -n $DISK ]]; then
	SCRATCH=$DISK
	E2E_DEV=$(printf '%d:%d' "0x$(stat -Lc %t "$DISK")" "0x$(stat -Lc %T "$DISK")")
fi
declare -A W=([web]=3 [batch]=1 [backup]=1 [db]=1)

# --- sampling ----------------------------------------------------------------

# demo_sampler OUT TENANT...: each second, one line "UPTIME USAGE_USEC BYTES
# ..." (per tenant) appended to OUT, with builtins only (no exec: each costs
# 0.3-1 s under TCG). Runs in the background until demo_sampler_stop.
DEMO_SAMPLER=
demo_sampler() {
	local out=$1 t line n
	shift
	(
		for ((i = 0; i < 900; i++)); do
			read -r t _ </proc/uptime
			line=$t
			for n in "$@"; do
				_snap "$n"
				line+=" $E2E_U $E2E_B"
			done
			printf '%s\n' "$line" >>"$out"
			e2e_sleep 1
		done
	) &
	DEMO_SAMPLER=$!
}
demo_sampler_stop() {
	[[ -n $DEMO_SAMPLER ]] || return 0
	kill "$DEMO_SAMPLER" 2>/dev/null
	wait "$DEMO_SAMPLER" 2>/dev/null
	DEMO_SAMPLER=
}
uptime_now() { read -r UP _ </proc/uptime; }

# --- one workload, two phases --------------------------------------------------

# demo_part PART KIND SETTLE_S TENANT...: the tenants' loads are running
# (cg_spawn). Samples them, measures WINDOW s under the kernel's defaults,
# starts fairshared on $FS_OUT/demo-PART.conf, waits for its plan to settle,
# measures WINDOW s again, stops it (the original values come back). KIND
# cpu: shares of the tenants' core; disk: shares of the bytes read. Leaves
# "TENANT DEF_AMOUNT DEF_SHARE FSD_AMOUNT FSD_SHARE PLAN_SHARE" lines in
# $FS_OUT/demo-PART.sum and the per-second series in $FS_OUT/demo-PART.dat.
demo_part() {
	local part=$1 kind=$2 settle=$3 raw plan d0 d1 fs f0 f1 p0 p1 n res
	shift 3
	raw=$FS_OUT/demo-$part.raw plan=$FS_OUT/demo-$part.plan
	: >"$raw"
	demo_sampler "$raw" "$@"
	e2e_sleep "$settle"
	uptime_now && d0=$UP
	e2e_sleep "$WINDOW"
	uptime_now && d1=$UP
	fsd_start "demo-$part" "$FS_OUT/demo-$part.conf"
	uptime_now && fs=$UP
	t_check "$part: fairshared running (log $(fsd_log "demo-$part"))" \
		fsd_wait_periods "demo-$part" 24 90
	p0=$(fsd_period "demo-$part")
	uptime_now && f0=$UP
	e2e_sleep "$WINDOW"
	uptime_now && f1=$UP
	p1=$(fsd_period "demo-$part")
	demo_sampler_stop
	fsd_stop "demo-$part"
	assert_eq "$part: fairshared stopped cleanly (original values restored)" "$?" 0
	res=cpu
	[[ $kind == disk ]] && res=io.disk0.rbps
	for n in "$@"; do fsd_series "demo-$part" "$n" "$res" | sed "s/^/$n /"; done >"$plan"
	# Periods to time: linear between the window's ends (a period under
	# TCG on a busy host is longer than the interval).
	awk -v kind="$kind" -v names="$*" -v d0="$d0" -v d1="$d1" -v fs="$fs" -v f0="$f0" \
		-v f1="$f1" -v p0="$p0" -v p1="$p1" -v sum="$FS_OUT/demo-$part.sum" \
		-v dat="$FS_OUT/demo-$part.dat" '
		function share(i, tot) { return tot > 0 ? amt[i] / tot : 0 }
		FILENAME == ARGV[1] { al[$1, $2] = $3 < 0 ? 0 : $3; if ($2 > last) last = $2; next }
		{ t[FNR] = $1; for (i = 2; i <= NF; i++) v[FNR, i] = $i; rows = FNR }
		END {
			n = split(names, nm); spp = (f1 - f0) / (p1 > p0 ? p1 - p0 : 1)
			# plan shares per period, and their mean over the window
			for (p = 1; p <= last; p++) {
				tot = 0
				for (i = 1; i <= n; i++) tot += al[nm[i], p]
				for (i = 1; i <= n; i++) {
					ps[i, p] = kind == "cpu" ? al[nm[i], p] : (tot > 0 ? al[nm[i], p] / tot : 0)
					if (p > p0 && p <= p1) { pm[i] += ps[i, p]; pc[i]++ }
				}
			}
			print "# t phase " names > dat
			for (r = 2; r <= rows; r++) {
				dt = t[r] - t[r - 1]; mid = (t[r] + t[r - 1]) / 2
				if (dt <= 0) continue
				for (i = 1; i <= n; i++) {
					amt[i] = kind == "cpu" ? (v[r, 2 * i] - v[r - 1, 2 * i]) / 1e6 / dt \
						: (v[r, 2 * i + 1] - v[r - 1, 2 * i + 1]) / dt
					w = mid >= d0 && mid <= d1 ? "d" : (mid >= f0 && mid <= f1 ? "f" : "")
					if (w != "") { A[w, i] += amt[i] * dt; D[w, i] += dt }
				}
				tot = 0
				for (i = 1; i <= n; i++) tot += amt[i]
				line = sprintf("%.1f %d", mid - t[1], mid >= fs)
				p = mid >= fs ? int(p0 + (mid - f0) / spp + 0.5) : 0
				for (i = 1; i <= n; i++)
					line = line sprintf(" %.4f %s", kind == "cpu" ? amt[i] : share(i, tot),
						p >= 1 && p <= last ? sprintf("%.4f", ps[i, p]) : "NaN")
				print line > dat
			}
			for (i = 1; i <= n; i++) for (w = 0; w < 2; w++) {
				k = w ? "f" : "d"; M[k, i] = D[k, i] > 0 ? A[k, i] / D[k, i] : 0; T[k] += M[k, i] }
			for (i = 1; i <= n; i++)
				printf "%s %.4f %.4f %.4f %.4f %.4f\n", nm[i], M["d", i],
					kind == "cpu" ? M["d", i] : (T["d"] > 0 ? M["d", i] / T["d"] : 0),
					M["f", i], kind == "cpu" ? M["f", i] : (T["f"] > 0 ? M["f", i] / T["f"] : 0),
					pc[i] ? pm[i] / pc[i] : 0 > sum
			printf "%.1f %.1f %.1f %.1f %.1f\n", d0 - t[1], d1 - t[1], fs - t[1], f0 - t[1], f1 - t[1] > (dat ".marks")
		}' "$plan" "$raw"
}

# demo_report PART KIND WHAT: the table of both phases, the checks, and the
# verdict: the tenant the defaults serve worst against its entitlement.
demo_report() {
	local part=$1 kind=$2 what=$3 n da ds fa fsh ps ent wsum=0 unit worst="" wr=1e9 ratio r
	local -a rows
	mapfile -t rows <"$FS_OUT/demo-$part.sum"
	for r in "${rows[@]}"; do wsum=$((wsum + W[${r%% *}])); done
	unit=cores
	[[ $kind == disk ]] && unit=MB/s
	t_note ""
	t_note "$(printf '%-7s %8s | %17s | %26s' tenant entitled 'kernel defaults' 'with fairshare')"
	t_note "$(printf '%-7s %8s | %8s %8s | %8s %8s %8s' '' share "$unit" share "$unit" share plan)"
	for r in "${rows[@]}"; do
		read -r n da ds fa fsh ps <<<"$r"
		ent=$(calc "${W[$n]} / $wsum")
		if [[ $kind == disk ]]; then da=$(calc "$da / 1e6") fa=$(calc "$fa / 1e6"); fi
		t_note "$(printf '%-7s %6.0f %% | %8.2f %6.0f %% | %8.2f %6.0f %% %6.0f %%' "$n" \
			"$(calc "100 * $ent")" "$da" "$(calc "100 * $ds")" "$fa" "$(calc "100 * $fsh")" \
			"$(calc "100 * $ps")")"
		record_only "$part.$n" "entitled=$ent default=$ds fairshare=$fsh plan=$ps"
		ratio=$(calc "$ds / $ent")
		if _cmp "$ratio" "$wr" '<'; then wr=$ratio worst="$n $ent $ds $fsh"; fi
	done
	t_note ""
	for r in "${rows[@]}"; do
		read -r n da ds fa fsh ps <<<"$r"
		ent=$(calc "${W[$n]} / $wsum")
		assert_between "$part: $n's measured share under fairshare vs its plan $ps" "$fsh" \
			"$(calc "$ps - $TOL")" "$(calc "$ps + $TOL")"
		assert_between "$part: $n's measured share under fairshare vs its entitlement $ent" "$fsh" \
			"$(calc "$ent - $TOL")" "$(calc "$ent + $TOL")"
	done
	read -r n ent ds fsh <<<"$worst"
	DEMO_VERDICTS+=("$(printf '%s: without fairshare, %s gets %.0f %% of the %s it is entitled to %.0f %% of; with fairshare, %.0f %%.' \
		"$what" "$n" "$(calc "100 * $ds")" "$what" "$(calc "100 * $ent")" "$(calc "100 * $fsh")")")
	t_note "${DEMO_VERDICTS[-1]}"
}
DEMO_VERDICTS=()

t_check "demo slice $CG_ROOT/$T" e2e_setup
t_note "tenants' CPU: ${E2E_TENANT_CPUS} (1 core)${DISK:+, disk $DISK at $(calc "$BPS / 1e6") MB/s}"

t_section "1. CPU: web (weight 3) and batch (weight 1), two busy threads each"
e2e_conf "$FS_OUT/demo-cpu.conf" 0.5 psdsf
e2e_tenant "$FS_OUT/demo-cpu.conf" web "${W[web]}"
e2e_tenant "$FS_OUT/demo-cpu.conf" batch "${W[batch]}"
e2e_tenants web batch
cg_spawn "$T/web" cpu_load 2 300
cg_spawn "$T/batch" cpu_load 2 300
demo_part cpu cpu 3 web batch
cg_kill "$T/web"
cg_kill "$T/batch"
demo_report cpu cpu CPU

if [[ -n $DISK && -n $BPS ]]; then
	t_section "2. disk: backup (fio iodepth 32) and db (iodepth 1) read, weights 1 and 1"
	e2e_conf "$FS_OUT/demo-disk.conf" 0.5 psdsf
	echo "io.disk0 = $DISK $BPS $BPS" >>"$FS_OUT/demo-disk.conf"
	e2e_tenant "$FS_OUT/demo-disk.conf" backup "${W[backup]}"
	e2e_tenant "$FS_OUT/demo-disk.conf" db "${W[db]}"
	e2e_tenants backup db
	cg_spawn "$T/backup" rand_io randread 32 300 0
	cg_spawn "$T/db" rand_io randread 1 300 64
	demo_part disk disk 10 backup db # fio starts in seconds under TCG
	cg_kill "$T/backup"
	cg_kill "$T/db"
	demo_report disk disk disk
else
	t_note "2. disk: not shown (set FS_DEMO_DISK=/dev/BLOCKDEV and FS_DEMO_DISK_BPS=BYTES_PER_S; it is only read)"
fi

t_section "verdict"
for v in "${DEMO_VERDICTS[@]}"; do t_note "$v"; done
t_done
