#!/bin/bash
# The fairshare demo (tools/demo runs it on a cgroup v2 host, or in the VM):
# three tenants with entitlements 3:2:1 and synthetic loads under
# fairshared (psdsf), printing the computed allocation next to the measured
# shares, then cleaning up.
#   web    weight 3: 2 busy threads
#   batch  weight 2: 2 busy threads
#   backup weight 1: O_DIRECT writes (fio) to FS_DEMO_DISK when set (a
#                    scratch device: it is overwritten; in the VM /dev/vda),
#                    else 1 busy thread
# Runs as a VM suite (ok/not ok lines, "N passed, N failed"); the checks are
# loose, it is a demonstration: in limits mode, measured cpu within 0.1 of
# the computed limit; in weights mode (cpu and disk both contended: no cpu.max,
# the CPU goes by cpu.weight), the two CPU-bound tenants' measured ratio
# within 20 % of their cpu.weight ratio.
. "$FS_SRC/tests/vm/lib.sh"
E2E_TOP=${E2E_TOP:-fairshare-demo.slice}
E2E_CTL=${E2E_CTL:-fairshare-demo-ctl}
E2E_STATE=${E2E_STATE:-/run/fairshare-demo}
. "$FS_SRC/tests/vm/e2e-lib.sh"
trap e2e_cleanup EXIT
T=$E2E_TOP
DISK=${FS_DEMO_DISK:-}
if [[ -z $DISK && $FS_SUITE == demo && -b /dev/vda ]]; then DISK=/dev/vda; fi
BPS=${FS_DEMO_DISK_BPS:-${FS_VM_DISK_BPS:-}}
SECS=${FS_DEMO_SECONDS:-60}

t_check "demo slice $CG_ROOT/$T" e2e_setup
conf=$FS_OUT/demo.conf
e2e_conf "$conf" 0.5 psdsf
[[ -n $DISK && -n $BPS ]] && echo "io.disk0 = $DISK $BPS $BPS" >>"$conf"
e2e_tenant "$conf" web 3
e2e_tenant "$conf" batch 2
e2e_tenant "$conf" backup 1
e2e_tenants web batch backup
t_note "config: $conf (tenants' CPU: ${E2E_TENANT_CPUS}, capacity 1 core${DISK:+, disk $DISK at $BPS B/s})"

cg_spawn $T/web cpu_load 2 "$SECS"
cg_spawn $T/batch cpu_load 2 "$SECS"
if [[ -n $DISK ]]; then
	SCRATCH=$DISK
	cg_spawn $T/backup io_load 2 4 "$SECS" 0
else
	cg_spawn $T/backup cpu_load 1 "$SECS"
fi
fsd_start demo "$conf"
t_check "fairshared running (log $(fsd_log demo))" fsd_wait_periods demo 20 60

declare -A cw=() used=()
for round in 1 2; do
	mapfile -t m < <(e2e_measure 5 web batch backup)
	t_section "round $round: computed allocation vs measured (5 s)"
	printf '# %-7s %6s %10s %10s %10s %12s %12s\n' tenant weight "cpu plan" "cpu used" mode "disk plan" "disk used"
	i=0
	for n in web batch backup; do
		l=$(fsd_line demo $n)
		read -r c b <<<"${m[i]}"
		i=$((i + 1))
		lim=$(fsd_limit "$l" cpu)
		dl=-
		[[ -n $DISK ]] && dl=$(fsd_limit "$l" io.disk0.wbps)
		printf '# %-7s %6s %10s %10s %10s %12s %12s\n' $n "$(grep -A3 "^\[tenant.$n\]" "$conf" | sed -n 's/^weight = //p')" \
			"$lim" "$c" "$(kv "$l" mode)" "$dl" "$( [[ -n $DISK ]] && echo "$b" || echo -)"
		record "round${round}.$n" "cpu_plan=$lim cpu_used=$c disk_plan=$dl disk_used=$b"
		cw[$n]=$(kv "$l" cpu.weight) used[$n]=$c
		if ((round == 2)) && [[ $lim != max ]]; then
			if [[ $(kv "$l" mode) == limits ]]; then
				assert_between "$n: measured cpu within 0.1 of the computed limit $lim" "$c" "$(calc "$lim - 0.1")" "$(calc "$lim + 0.1")"
			else
				weights_mode=1
			fi
		fi
	done
done
if [[ -n ${weights_mode:-} ]]; then
	assert_near "weights mode: web:batch measured cpu follows cpu.weight ${cw[web]}:${cw[batch]}" \
		"$(calc "${used[web]} / ${used[batch]}")" "$(calc "${cw[web]} / ${cw[batch]}")" 0.2
fi
fsd_stop demo
assert_eq "fairshared stopped cleanly (original values restored)" "$?" 0
t_done
