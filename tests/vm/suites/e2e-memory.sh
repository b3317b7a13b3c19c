#!/bin/bash
# e2e test 4 (issue 7): memory. Capacity 256 MiB, equal weights: b holds
# 150 MiB, a grows towards 400 MiB. Memory saturates, the fair allocation is
# 128 MiB each; a is throttled via memory.high (no OOM kill, it stays alive),
# and memory.max is never below memory.current (sampled while a pushes).
. "$FS_SRC/tests/vm/lib.sh"
. "$FS_SRC/tests/vm/e2e-lib.sh"
trap e2e_cleanup EXIT
T=$E2E_TOP

conf=$FS_OUT/e2e-memory.conf
e2e_conf "$conf" 0.3 psdsf
echo "memory = 256Mi" >>"$conf"
e2e_tenant "$conf" a 1
e2e_tenant "$conf" b 1
t_check "tenant cgroups created" eval 'e2e_setup && e2e_tenants a b'

fsd_start fsd "$conf"
t_section "b holds 150 MiB"
cg_spawn $T/b stress-ng --vm 1 --vm-bytes 150M --vm-keep --vm-hang 0 --timeout 120s --quiet
bpid=$CG_PID
b_holds() { (($(cg_get $T/b memory.current) >= 140 * MiB)); }
t_check "b reached 140 MiB" wait_for 60 b_holds
fsd_wait_periods fsd 5 20

t_section "a grows towards 400 MiB"
prog=/tmp/a.progress
cg_spawn $T/a "$GROW_MEM" 400 $prog
apid=$CG_PID
mib_at_least() { (($(cat "$1" 2>/dev/null || echo 0) >= $2)); }
t_check "a grew past 100 MiB" wait_for 60 mib_at_least $prog 100
# While a pushes against memory.high: memory.max >= memory.current, always.
bad=0 samples=0 maxcur=0
for i in $(seq 12); do
	for n in a b; do
		cur=$(cg_get $T/$n memory.current)
		mx=$(cg_get $T/$n memory.max)
		samples=$((samples + 1))
		[[ $mx == max ]] || ((mx >= cur)) || { bad=$((bad + 1)); t_note "$n: memory.max $mx < memory.current $cur"; }
		[[ $n == a ]] && ((cur > maxcur)) && maxcur=$cur
	done
	e2e_sleep 0.5
done
record mem_samples "$samples"
assert_eq "memory.max >= memory.current in every sample ($samples)" "$bad" 0
g0=$(cat $prog)
e2e_sleep 4
g1=$(cat $prog)
la=$(fsd_line fsd a)
lb=$(fsd_line fsd b)
t_note "plan a: ${la#*debug: }"
t_note "plan b: ${lb#*debug: }"
high=$(cg_get $T/a memory.high)
record a_memory_high "$high"
record a_memory_max "$(cg_get $T/a memory.max)"
record a_memory_current_peak_sampled "$maxcur"
record a_grown_mib "$g1"
record a_grow_rate_mib_s "$(calc "($g1 - $g0) / 4")"
record b_memory_high "$(cg_get $T/b memory.high)"
assert_eq "mode limits, memory is the bottleneck" "$(kv "$la" mode) $(kv "$la" bottleneck)" "limits memory"
assert_near "a's memory.high is its fair half (128 MiB)" "$high" $((128 * MiB)) 0.10
assert_near "memory.high in the cgroup = the computed limit" "$high" "$(fsd_limit "$la" memory)" 0.01
t_check "a alive (throttled, not killed)" alive "$apid"
t_check "b alive" alive "$bpid"
assert_lt_grow=$(calc "($g1 - $g0) / 4")
assert_le "a is throttled: grows <= 8 MiB/s over memory.high" "$assert_lt_grow" 8 MiB/s
assert_ge "a: memory.events high counted" "$(cg_stat $T/a memory.events high)" 1
assert_eq "a: no OOM kill" "$(cg_stat $T/a memory.events oom_kill)" 0
assert_eq "a: never hit memory.max (memory.events max)" "$(cg_stat $T/a memory.events max)" 0
assert_eq "b: no OOM kill" "$(cg_stat $T/b memory.events oom_kill)" 0
# The daemon's own record: every memory.max it planned is >= memory.high.
viol=$(awk '/tenant=/ { h = $0; sub(/.*memory.high=/, "", h); sub(/ .*/, "", h); m = $0; sub(/.*memory.max=/, "", m); sub(/ .*/, "", m)
	if (h != "max" && m != "max" && m + 0 < h + 0) n++ } END { print n + 0 }' "$(fsd_log fsd)")
assert_eq "no logged period planned memory.max below memory.high" "$viol" 0

fsd_stop fsd
assert_eq "daemon stopped with status 0" "$?" 0
assert_eq "a: memory.high restored" "$(cg_get $T/a memory.high)" max
((T_FAIL > 0)) && e2e_dump fsd 12
t_done
