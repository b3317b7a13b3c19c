#!/bin/bash
# Proves the test bed: cgroup v2 controllers exist in the VM and enforce
# cpu.max, cpu.weight, memory.high, memory.max and io.max with real numbers,
# and the scratch disk has the capacity qemu was told. Tolerances are wide
# because TCG timing is noisy (see notes/vm-and-bpf-measurements.md).
. "$FS_SRC/tests/vm/lib.sh"

T=fstest
trap 'cg_remove $T; _bg_cleanup' EXIT
MiB=1048576

# --- controllers ---
t_section "controllers"
ctl=$(cat "$CG_ROOT/cgroup.controllers")
t_note "cgroup.controllers: $ctl"
for c in cpu memory io cpuset pids; do
	t_check "controller $c available" grep -qw "$c" <<<"$ctl"
done
t_check "tenant cgroup created with +cpu +memory +io" cg_create $T
for c in cpu memory io; do
	t_check "$c enabled below $T" grep -qw "$c" "$(cg_path $T)/cgroup.controllers"
done

# --- cpu.max ---
t_section "cpu.max"
cg_create $T/cmax
cg_set $T/cmax cpu.max "20000 100000"
cg_spawn $T/cmax burn_cpu 10
sleep 0.5
share=$(cg_cpu_share 3 $T/cmax)
record cpu_max_20pct_cores "$share"
assert_le "cpu.max 20000 100000 limits a burner (<= 1.25x quota)" "$share" 0.25 cores
assert_ge "the capped burner did run" "$share" 0.05 cores
assert_ge "cpu.stat nr_throttled" "$(cg_stat $T/cmax cpu.stat nr_throttled)" 1
cg_kill $T/cmax

# --- cpu.weight ---
t_section "cpu.weight"
# Both burners pinned to CPU 0 so that the weights decide the split.
cg_create $T/w200
cg_create $T/w100
cg_set $T/w200 cpu.weight 200
cg_set $T/w100 cpu.weight 100
cg_spawn $T/w200 burn_cpu 10 0
cg_spawn $T/w100 burn_cpu 10 0
sleep 0.5
read -r -d '' a b < <(cg_cpu_shares 3 $T/w200 $T/w100)
ratio=$(calc "$a / $b")
record cpu_weight_200_cores "$a"
record cpu_weight_100_cores "$b"
record cpu_weight_ratio "$ratio"
assert_between "cpu.weight 200:100 on one CPU splits ~2:1" "$ratio" 1.6 2.5
assert_le "both burners shared one CPU" "$(calc "$a + $b")" 1.1 cores
cg_kill $T/w200
cg_kill $T/w100

# --- memory.high ---
t_section "memory.high"
# No swap in the VM: anonymous memory over memory.high cannot be reclaimed,
# so the kernel throttles the allocator (penalty sleeps) instead of killing.
cg_create $T/mhigh
cg_set $T/mhigh memory.high $((32 * MiB))
prog=/tmp/mhigh.progress
cg_spawn $T/mhigh "$GROW_MEM" 128 $prog
# Measure from the moment it is near the limit, not from python's start-up
# (seconds under TCG on a loaded host).
mib_at_least() { (($(cat "$1" 2>/dev/null || echo 0) >= $2)); }
t_check "memory.high: grower reached 16 MiB" wait_for 30 mib_at_least $prog 16
sleep 3
got=$(cat $prog 2>/dev/null || echo 0)
cur=$(cg_get $T/mhigh memory.current)
record memory_high_32M_grown_mib "$got"
record memory_high_32M_current_bytes "$cur"
t_check "memory.high: grower still alive" alive "$CG_PID"
assert_eq "memory.high: no OOM kill" "$(cg_stat $T/mhigh memory.events oom_kill)" 0
assert_ge "memory.high: high events counted" "$(cg_stat $T/mhigh memory.events high)" 1
assert_le "memory.high: memory.current held near memory.high (<= 1.25x)" "$cur" $((40 * MiB)) bytes
assert_le "memory.high: grower throttled (MiB grown of 128, 3 s after 16)" "$got" 64
cg_kill $T/mhigh

# Unlimited cgroup for the baselines below.
cg_create $T/mfree

# --- memory.max ---
t_section "memory.max"
cg_create $T/mmax
cg_set $T/mmax memory.max $((32 * MiB))
t_check "memory.max 32M: a 8 MiB grower succeeds" cg_run $T/mmax "$GROW_MEM" 8
cg_run $T/mmax "$GROW_MEM" 64
rc=$?
assert_eq "memory.max 32M: a 64 MiB grower is SIGKILLed (status)" "$rc" 137
assert_ge "memory.max: memory.events oom_kill" "$(cg_stat $T/mmax memory.events oom_kill)" 1
peak=$(cg_get $T/mmax memory.peak)
record memory_max_32M_peak_bytes "$peak"
assert_le "memory.max: memory.peak within the limit" "$peak" $((32 * MiB)) bytes

# --- io.max ---
t_section "io.max"
dev=$(scratch_dev)
t_note "scratch disk $SCRATCH = $dev, qemu capacity $FS_VM_DISK_BPS B/s"
cg_create $T/io
cg_set $T/io io.max "$dev wbps=$((4 * MiB)) rbps=$((4 * MiB))"
wt=$(cg_run $T/io timed_dd if=/dev/zero of="$SCRATCH" bs=1M count=8 oflag=direct)
rt=$(cg_run $T/io timed_dd if="$SCRATCH" of=/dev/null bs=1M count=8 iflag=direct)
record io_max_4MiBps_write_8MiB_s "$wt"
record io_max_4MiBps_read_8MiB_s "$rt"
assert_ge "io.max wbps 4 MiB/s: 8 MiB O_DIRECT write (expect 2 s, >= 0.75x)" "$wt" 1.5 s
assert_ge "io.max rbps 4 MiB/s: 8 MiB O_DIRECT read (expect 2 s, >= 0.75x)" "$rt" 1.5 s
assert_ge "io.stat wbytes" "$(cg_io_stat $T/io wbytes)" $((8 * MiB))
assert_ge "io.stat rbytes" "$(cg_io_stat $T/io rbytes)" $((8 * MiB))
ft=$(cg_run $T/mfree timed_dd if=/dev/zero of="$SCRATCH" bs=1M count=8 oflag=direct)
record io_unlimited_write_8MiB_s "$ft"
assert_le "without io.max the same write is faster" "$ft" "$wt" s

# --- scratch disk capacity ---
t_section "scratch disk capacity"
# qemu's throttle allows a burst of 1/10 s of the rate; 64 MiB takes long
# enough at 32 MiB/s that the burst is a few percent.
for dir in write read; do
	bps=$(cg_run $T/mfree disk_bps $dir 64)
	record "disk_${dir}_Bps" "$bps"
	assert_near "scratch disk $dir capacity is qemu's throttling.bps-total" "$bps" "$FS_VM_DISK_BPS" 0.2
done

cg_remove $T
t_check "tenant cgroups removed" test ! -d "$(cg_path $T)"
t_done
