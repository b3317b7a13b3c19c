#!/bin/bash
# e2e test 1 (issue 7): two CPU-bound tenants with weights 2:1 under psdsf.
# Each runs 2 busy threads on the tenants' CPU (capacity 1 core, see
# e2e-lib.sh), so both demand the whole CPU and the fair allocation is
# 2/3 : 1/3 core. Checks: the cgroups hold the cpu.max the daemon computed,
# the measured ratio is within 10% of 2:1 and each tenant's measured cores
# match its computed limit.
. "$FS_SRC/tests/vm/lib.sh"
. "$FS_SRC/tests/vm/e2e-lib.sh"
trap e2e_cleanup EXIT
T=$E2E_TOP

conf=$FS_OUT/e2e-cpu.conf
e2e_conf "$conf" 0.3 psdsf
e2e_tenant "$conf" a 2
e2e_tenant "$conf" b 1
t_check "tenant cgroups created" eval 'e2e_setup && e2e_tenants a b'

t_section "loads: 2 threads in a, 2 in b; daemon, interval 300 ms"
cg_spawn $T/a cpu_load 2 60
cg_spawn $T/b cpu_load 2 60
fsd_start fsd "$conf"
t_check "daemon ran 10 periods" fsd_wait_periods fsd 10 30
# Convergence: both are throttled, so their probed demand reaches the CPU.
fsd_wait_periods fsd 10 30

t_section "measure 8 s"
read -r -d '' ma _ mb _ < <(e2e_measure 8 a b)
la=$(fsd_line fsd a)
lb=$(fsd_line fsd b)
t_note "plan a: ${la#*debug: }"
t_note "plan b: ${lb#*debug: }"
ratio=$(calc "$ma / $mb")
record a_cores "$ma"
record b_cores "$mb"
record ratio_a_b "$ratio"
record a_cpu_limit "$(fsd_limit "$la" cpu)"
record b_cpu_limit "$(fsd_limit "$lb" cpu)"
assert_near "measured cpu ratio a:b is 2:1" "$ratio" 2 0.10
assert_near "plan: a's cpu limit is 2/3 core" "$(fsd_limit "$la" cpu)" 0.667 0.05
assert_near "plan: b's cpu limit is 1/3 core" "$(fsd_limit "$lb" cpu)" 0.333 0.05
assert_near "a's measured cores match its computed limit" "$ma" "$(fsd_limit "$la" cpu)" 0.10
assert_near "b's measured cores match its computed limit" "$mb" "$(fsd_limit "$lb" cpu)" 0.10
assert_eq "mode is limits" "$(kv "$la" mode)" limits

for n in a b; do
	t_check "$n: cpu.max and cpu.weight in the cgroup = the plan" fsd_files_match fsd $n cpu.max cpu.weight
done

fsd_stop fsd
assert_eq "daemon stopped with status 0" "$?" 0
assert_eq "a: cpu.max restored on stop (on_exit=restore)" "$(cg_get $T/a cpu.max)" "max 100000"
((T_FAIL > 0)) && e2e_dump fsd 12
t_done
