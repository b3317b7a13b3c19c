#!/bin/bash
# e2e test 5 (issue 7): the minimal-gap priority mode (enforce = weights;
# auto keeps hard limits with two bottlenecks since issue 14, see e2e-mix).
# Tenants on the 1-core tenant CPU and the qemu-throttled disk:
#   a: CPU only (2 threads)   b: disk only (fio, 2 jobs x iodepth 4)
#   c: both (1 thread + fio 1 job x iodepth 4)
# psdsf, enforce=weights, weights a:b:c = 1:2:1: the disk saturates (b, c)
# and a fills the CPU: 2 bottlenecks; cpu.max is
# lifted (io.max keeps its limits: io.weight is inert here, no io.cost and
# scheduler none, see agent/io_weight.h); cpu.weight and io.weight in the
# cgroups are the plan's, which follow base*(1+gain*gap) for promoted
# tenants, base otherwise (plan.h); and the mode does not flap.
. "$FS_SRC/tests/vm/lib.sh"
. "$FS_SRC/tests/vm/e2e-lib.sh"
trap e2e_cleanup EXIT
T=$E2E_TOP
BPS=$FS_VM_DISK_BPS

t_check "tenant cgroups created" eval 'e2e_setup && e2e_tenants a b c'
e2e_cpu_disk_mix 200

# --- test 5 ---
conf=$FS_OUT/e2e-weights.conf
e2e_conf "$conf" 0.3 psdsf weights
echo "io.disk0 = $SCRATCH $BPS $BPS" >>"$conf"
e2e_tenant "$conf" a 1
e2e_tenant "$conf" b 2
e2e_tenant "$conf" c 1
t_section "test 5: psdsf, enforce=weights, weights 1:2:1"
fsd_start fsd "$conf"
started() { grep -q '^fairshared: info: mode none -> weights: enforce=weights' "$(fsd_log fsd)"; }
t_check "weights mode logged" wait_for 60 started
fsd_wait_periods fsd 20 30
read -r -d '' ca ia cb ib cc ic < <(e2e_measure 6 a b c)
record w_measured "a=$ca cores, b=$ib B/s, c=$cc cores $ic B/s"
# The planned weights, over every logged weights-mode period: base*weight
# for tenants not promoted, base*weight*(1+9*gap) (clamped) for promoted ones
# (gap > 0); io.weight = cpu.weight; cpu.max lifted.
stats=$(awk -v conf="$conf" '
	BEGIN { while ((getline l < conf) > 0) { if (l ~ /^\[tenant\./) { t = l; gsub(/^\[tenant\.|\]$/, "", t) }
		if (l ~ /^weight = /) { sub(/^weight = /, "", l); w[t] = l } } }
	/tenant=.* mode=weights / {
		n = $0; sub(/.*tenant=/, "", n); sub(/ .*/, "", n)
		g = $0; sub(/.* gap=/, "", g); sub(/ .*/, "", g)
		cw = $0; sub(/.* cpu.weight=/, "", cw); sub(/ .*/, "", cw)
		iw = $0; sub(/.* io.weight=/, "", iw); sub(/ .*/, "", iw)
		cm = $0; sub(/.* cpu.max="/, "", cm); sub(/".*/, "", cm)
		base = 100 * w[n]; boost = base * (1 + 9 * g); if (boost > 10000) boost = 10000
		rows++
		if (cw != base) promoted++
		if (!(cw == base || (g > 0 && (cw - boost) ^ 2 < 1)) || iw != cw || cm != "max 100000") bad++ }
	END { printf "%d %d %d\n", rows, promoted, bad }' "$(fsd_log fsd)")
read -r rows promoted nbad <<<"$stats"
record weights_mode_tenant_rows "$rows"
record weights_mode_promoted_rows "$promoted"
assert_ge "weights-mode periods logged" "$rows" 3
assert_eq "every weights-mode plan follows base or base*(1+9*gap), io.weight = cpu.weight, cpu.max lifted" "$nbad" 0
# The files hold the plan (of one of the last periods).
for n in a b c; do
	t_check "$n: cpu.weight, io.weight, cpu.max in the cgroup = the plan" fsd_files_match fsd $n cpu.weight io.weight cpu.max
done
# Stability: the loads do not change, so once in weights mode the daemon
# should stay there, not flap every period.
switches=$(grep -c '^fairshared: info: mode ' "$(fsd_log fsd)")
record mode_switches "$switches in $(fsd_period fsd) periods"
assert_le "mode switches under a steady load (incl. the first)" "$switches" 3
fsd_stop fsd
assert_eq "test 5 daemon stopped with status 0" "$?" 0
((T_FAIL > 0)) && e2e_dump fsd 8
t_done
