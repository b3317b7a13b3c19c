#!/bin/bash
# e2e-mix (issue 14): CPU + disk, three tenants, unequal entitlements, two
# bottlenecks at once. a: CPU only (2 threads), weight 2; b: disk only (fio,
# 2 jobs x iodepth 4), weight 1; c: both (1 thread + fio 1 job x iodepth 4),
# weight 1. Tenants share CPU 1 and the qemu-throttled disk.
# In one run:
#   1. standalone demands: each tenant alone (the others frozen with
#      cgroup.freeze), its CPU (cores) and disk (bytes/s);
#   2. the target: `fairctl solve` (psdsf, one pool, each tenant's
#      standalone vector as its demand, max_tasks 1, the weights);
#   3. the kernel's defaults with plain cpu.weight = 100 x weight (what
#      operators have today; io.weight is inert on this disk);
#   4. fairshared (psdsf, enforce=auto).
# Asserted on phase 4: each tenant's dominant share (max of cpu / 1 core,
# disk / capacity) within 0.05 of the target's (the issue's bar), and the
# summed deviation from the target at most half the default phase's (the
# default leaves b at twice its target, 0.35 off). Until the estimator's
# CPU trim (agent/estimate/estimate.h) a stayed 0.03-0.07 short, and the
# bound here was 0.08: b's fio burns the CPU it is given (0.089 core with
# its CPU uncapped, 0.045 by hand for the same 0.31 of the disk), and its
# CPU estimate, anchored at its use, took that from a. With the trim,
# b's CPU demand steps down while its IO stays held and its threads do
# not wait. With the trim as it is now (its estimate held between steps,
# a step to its own use when not throttled): every tenant within 0.016 of
# its target in 4 of 4 idle runs; beside stress-ng --cpu 2 within
# 0.011-0.041 in 4 of 5 runs, and 0.069 in the fifth (b held at a trimmed
# cap while it kept waiting: issue 14's note).
. "$FS_SRC/tests/vm/lib.sh"
. "$FS_SRC/tests/vm/e2e-lib.sh"
trap e2e_cleanup EXIT
T=$E2E_TOP
BPS=$FS_VM_DISK_BPS
declare -A W=([a]=2 [b]=1 [c]=1) CPU=() IO=() DOM=() TGT=() DEM=()
t_check "tenant cgroups created" eval 'e2e_setup && e2e_tenants a b c'
e2e_cpu_disk_mix 400
e2e_sleep 12 # fio starts in seconds under TCG

freeze() { echo "$2" >"$CG_ROOT/$T/$1/cgroup.freeze"; }

# measure LABEL SECONDS: CPU[LABEL.n], IO[LABEL.n], DOM[LABEL.n] for a b c.
measure() {
	local n c b
	local -a out
	mapfile -t out < <(e2e_measure "$2" a b c)
	for n in a b c; do
		read -r c b <<<"${out[0]}"
		out=("${out[@]:1}")
		CPU[$1.$n]=$c IO[$1.$n]=$b
		DOM[$1.$n]=$(calc "($c > $b / $BPS) ? $c : $b / $BPS")
	done
}

t_section "1. standalone demands"
for n in a b c; do
	for o in a b c; do [[ $o == "$n" ]] || freeze "$o" 1; done
	e2e_sleep 2
	measure alone.$n 6
	t_note "$n alone: cpu ${CPU[alone.$n.$n]} cores, disk $(calc "${IO[alone.$n.$n]} / 1e6") MB/s"
	for o in a b c; do freeze "$o" 0; done
done
for n in a b c; do DEM[$n]="${CPU[alone.$n.$n]}, ${IO[alone.$n.$n]}"; done

t_section "2. the target (fairctl solve)"
scn=$FS_OUT/e2e-mix-target.ini
{
	printf '[scenario]\nresources = cpu, disk\n\n[pool.host]\ncapacity = 1, %s\n' "$BPS"
	for n in a b c; do
		printf '\n[tenant.%s]\ndemand = %s\nweight = %s\nmax_tasks = 1\n' "$n" "${DEM[$n]}" "${W[$n]}"
	done
} >"$scn"
solved=$("$(fs_bin fairctl)" solve "$scn" --policy psdsf) || t_fail "fairctl solve $scn"
sed 's/^/#   /' <<<"$solved"
for n in a b c; do
	x=$(awk -v t="$n" '$1 == t { print $3; exit }' <<<"$solved")
	read -r dc db <<<"${DEM[$n]/,/}"
	TGT[$n]=$(calc "$x * (($dc > $db / $BPS) ? $dc : $db / $BPS)")
done

t_section "3. kernel defaults, cpu.weight = 100 x weight"
for n in a b c; do cg_set "$T/$n" cpu.weight $((100 * W[$n])); done
e2e_sleep 2
measure def 10

t_section "4. fairshared"
conf=$FS_OUT/e2e-mix.conf
e2e_conf "$conf" 0.5 psdsf auto
echo "io.disk0 = $SCRATCH $BPS $BPS" >>"$conf"
for n in a b c; do e2e_tenant "$conf" "$n" "${W[$n]}"; done
fsd_start fsd "$conf"
fsd_wait_periods fsd 40 90
p0=$(fsd_period fsd)
measure fsd 16
for n in a b c; do
	for r in cpu io.disk0.wbps; do
		record "$n.$r.moves_over_10pct" "$(fsd_moves fsd "$n" "$r" "$p0") (moves > 10 %, changes) in the window"
	done
done
t_note "$(printf '%-4s %6s %7s  %-22s %-22s' tenant weight target 'default cpu/disk/dom' 'fairshare cpu/disk/dom')"
for n in a b c; do
	t_note "$(printf '%-4s %6s %7s  %5.2f %5.2f %-10s %5.2f %5.2f %s' "$n" "${W[$n]}" "${TGT[$n]}" \
		"${CPU[def.$n]}" "$(calc "${IO[def.$n]} / $BPS")" "${DOM[def.$n]}" \
		"${CPU[fsd.$n]}" "$(calc "${IO[fsd.$n]} / $BPS")" "${DOM[fsd.$n]}")"
	record "$n.dominant" "target=${TGT[$n]} default=${DOM[def.$n]} fairshare=${DOM[fsd.$n]}"
done
dev_d=0 dev_f=0
for n in a b c; do
	dev_d=$(calc "$dev_d + sqrt((${DOM[def.$n]} - ${TGT[$n]}) ^ 2)")
	dev_f=$(calc "$dev_f + sqrt((${DOM[fsd.$n]} - ${TGT[$n]}) ^ 2)")
	assert_between "$n's dominant share under fairshare vs the target ${TGT[$n]}" "${DOM[fsd.$n]}" \
		"$(calc "${TGT[$n]} - 0.05")" "$(calc "${TGT[$n]} + 0.05")"
	record "$n.miss" "$(calc "sqrt((${DOM[fsd.$n]} - ${TGT[$n]}) ^ 2)")"
done
record deviation "default=$dev_d fairshare=$dev_f"
assert_le "summed deviation from the target under fairshare vs half the default's ($dev_d)" \
	"$dev_f" "$(calc "$dev_d / 2")"
grep '^fairshared: info: mode ' "$(fsd_log fsd)" | head -n 4 | sed 's/^/#   /'
record mode_switches "$(grep -c '^fairshared: info: mode ' "$(fsd_log fsd)") in $(fsd_period fsd) periods"
fsd_stop fsd
t_done
