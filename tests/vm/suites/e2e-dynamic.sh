#!/bin/bash
# e2e test 3 (issue 7): demand change. Three CPU-bound tenants, equal
# weights, on the 1-core tenant CPU: 1/3 each. c goes idle (cgroup.freeze):
# a and b expand to 1/2 each within N periods; c returns and gets its 1/3
# back within M periods. Shares are measured; the periods are read from the
# daemon's log (the first period whose computed limit crosses the mark).
. "$FS_SRC/tests/vm/lib.sh"
. "$FS_SRC/tests/vm/e2e-lib.sh"
trap e2e_cleanup EXIT
T=$E2E_TOP
N_EXPAND=10 # periods for a and b to take c's share
N_RETURN=15 # periods for c to get its share back (probing from ~0: x1.5 .. x4 per period)

conf=$FS_OUT/e2e-dynamic.conf
e2e_conf "$conf" 0.3 psdsf
for n in a b c; do e2e_tenant "$conf" $n 1; done
t_check "tenant cgroups created" eval 'e2e_setup && e2e_tenants a b c'

for n in a b c; do cg_spawn $T/$n cpu_load 2 120; done
fsd_start fsd "$conf"
fsd_wait_periods fsd 20 40

t_section "phase 1: a, b, c busy"
read -r -d '' a1 _ b1 _ c1 _ < <(e2e_measure 6 a b c)
record p1_cores "a=$a1 b=$b1 c=$c1"
for n in a b c; do
	v=${n}1
	assert_near "phase 1: $n has 1/3 of the CPU" "${!v}" 0.333 0.15
done

t_section "phase 2: c idle (frozen)"
p0=$(fsd_period fsd)
cg_set $T/c cgroup.freeze 1
fsd_wait_periods fsd 12 30
read -r -d '' a2 _ b2 _ c2 _ < <(e2e_measure 6 a b c)
record p2_cores "a=$a2 b=$b2 c=$c2"
for n in a b; do
	pe=$(fsd_first fsd $n cpu "$p0" '>=' 0.45)
	record "${n}_expand_periods" "$((${pe:-99999} - p0))"
	assert_le "phase 2: $n's limit reached 0.45 core within $N_EXPAND periods" "$((${pe:-99999} - p0))" $N_EXPAND periods
	v=${n}2
	assert_near "phase 2: $n has 1/2 of the CPU" "${!v}" 0.5 0.15
done
assert_le "phase 2: frozen c uses nothing" "$c2" 0.02 cores

t_section "phase 3: c busy again"
p0=$(fsd_period fsd)
cg_set $T/c cgroup.freeze 0
fsd_wait_periods fsd 16 30
read -r -d '' a3 _ b3 _ c3 _ < <(e2e_measure 6 a b c)
record p3_cores "a=$a3 b=$b3 c=$c3"
pr=$(fsd_first fsd c cpu "$p0" '>=' 0.3)
record c_return_periods "$((${pr:-99999} - p0))"
assert_le "phase 3: c's limit back to >= 0.3 core within $N_RETURN periods" "$((${pr:-99999} - p0))" $N_RETURN periods
for n in a b c; do
	v=${n}3
	assert_near "phase 3: $n has 1/3 of the CPU again" "${!v}" 0.333 0.15
done
t_note "c's limit per period after its return: $(fsd_series fsd c cpu | awk -v a="$p0" '$1 > a && $1 <= a + 12 { printf "%s ", $3 }')"

fsd_stop fsd
assert_eq "daemon stopped with status 0" "$?" 0
((T_FAIL > 0)) && e2e_dump fsd 12
t_done
