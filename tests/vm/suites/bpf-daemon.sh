#!/bin/bash
# fairshared with sampler = bpf on a real cgroup v2 (issue 4): the eBPF
# runqueue wait reaches the daemon's estimator. Two tenants on one CPU
# (cpuset.cpus of their parent = CPU 1; the suite and the daemon on CPU 0):
#  - a runs two burners and b one, all on CPU 1 (declared cpu = 1: runqueue
#    wait is CPU demand only on a CPU the tenants keep busy): the debug log
#    shows cpu.wait > 0 for both, and a's CPU demand raised above its
#    usage (usage + wait, at most the core);
#  - then b runs one burner alone: wait ~0, demand = usage;
#  - SIGHUP (reload) does not leak programs; after SIGTERM, and after a
#    --once run, `bpftool prog show` lists none of ours (fs_* names).
# The daemon runs --dry-run: nothing is written, so no throttling adds wait.
. "$FS_SRC/tests/vm/lib.sh"

TOP=fsbpf
CTL=fsbpf-ctl
STATE=/run/fsbpf
CONF=$STATE/fairshare.conf
INTERVAL=0.5
# our program names as the kernel keeps them (15 chars): sched.bpf.c,
# blk.bpf.c, net.bpf.c
OURS='fs_sched_switch|fs_blk_bio_queu|fs_net_ingress|fs_net_egress'

exec {SLEEP_FD}<> <(:)
nap() { read -rt "$1" -u "$SLEEP_FD" || :; }

cleanup() {
	_bg_cleanup
	cg_remove "$TOP" 2>/dev/null
	if [[ -d $CG_ROOT/$CTL ]]; then
		echo $$ >"$CG_ROOT/cgroup.procs"
		rmdir "$CG_ROOT/$CTL"
	fi
	rm -rf "$STATE"
}
trap cleanup EXIT

# ours: how many of our programs the kernel has loaded (what bpftool lists).
ours() { bpftool prog show 2>/dev/null | grep -cE "name ($OURS)( |$)"; }

# periods: completed periods in the daemon's log.
periods() { grep -c '^fairshared: debug: period [0-9]*:' "$FS_OUT/fsd.log"; }

# wait_periods N: until N more periods are logged (timeout 60 s).
reached() { (($(periods) >= $1)); }
wait_periods() {
	local target=$(($(periods) + $1))
	nap "$(calc "$1 * $INTERVAL")"
	wait_for 60 reached "$target"
}

# busy TENANT [CORES]: the daemon saw the tenant use more than CORES (0.5).
busy() {
	local u
	u=$(kv "$(tline "$1")" cpu.usage) && [[ $u != - ]] && _cmp "$u" "${2:-0.5}" '>'
}

# tline TENANT: the tenant's line of the last complete period.
tline() { grep "^fairshared: debug: tenant=$1 " "$FS_OUT/fsd.log" | tail -n 1; }

# kv LINE KEY: value of KEY=VALUE in a log line.
kv() {
	local re=${2//./\\.}
	[[ $1 =~ (^|[ ])$re=([^ ]*) ]] && echo "${BASH_REMATCH[2]}"
}

# avg TENANT KEY N: mean of KEY over the tenant's last N lines.
avg() {
	grep "^fairshared: debug: tenant=$1 " "$FS_OUT/fsd.log" | tail -n "$3" |
		awk -v k="$2" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) {
			s += substr($i, length(k) + 2); n++ } } END { if (n) printf "%.4f\n", s / n }'
}

dump() { tail -n "${1:-12}" "$FS_OUT/fsd.log" | sed 's/^/#   /'; }

t_section "setup"
if ! command -v bpftool >/dev/null; then
	t_skip "bpf-daemon" "no bpftool"
	t_done
	exit 0
fi
FSD=$(fs_bin fairshared) || { t_fail "fairshared built"; t_done; exit 1; }
mkdir -p "$STATE"
cg_create "$TOP" "+cpu +memory +io +cpuset" &&
	cg_set "$TOP" cpuset.cpus 1 &&
	cg_create "$TOP/a" && cg_create "$TOP/b" &&
	mkdir -p "$CG_ROOT/$CTL" && cg_set "$CTL" cpuset.cpus 0 &&
	echo $$ >"$CG_ROOT/$CTL/cgroup.procs" ||
	{ t_fail "cgroups set up"; t_done; exit 1; }
cat >"$CONF" <<EOF
[agent]
interval = ${INTERVAL}s
sampler = bpf
cgroup_root = $CG_ROOT
state_dir = $STATE
socket = $STATE/control.sock

[resources]
cpu = 1
net = 1Gbit

[tenant.a]
cgroup = $TOP/a

[tenant.b]
cgroup = $TOP/b
EOF
before=$(ours)
t_note "our programs loaded before the daemon: $before"
assert_eq "no program of ours before the daemon" "$before" 0

t_section "daemon with sampler = bpf"
bg_start fsd "$FSD" --config "$CONF" --dry-run --log-level debug
if ! wait_for 60 grep -q '^fairshared: debug: period 2:' "$FS_OUT/fsd.log"; then
	t_fail "daemon runs periods"
	dump
	t_done
	exit 1
fi
t_check "log: eBPF counters loaded, net attached at the tenants' common ancestor" \
	grep -q "eBPF counters loaded (sched net), net attached at $CG_ROOT/$TOP\$" "$FS_OUT/fsd.log"
running=$(ours)
record progs_while_running "$running"
assert_eq "sched + net ingress/egress loaded while running" "$running" 3

t_section "three burners sharing one CPU (two in tenant a, one in b)"
cg_spawn "$TOP/a" stress-ng --cpu 2 --cpu-method loop --timeout 60s --quiet
cg_spawn "$TOP/b" stress-ng --cpu 1 --cpu-method loop --timeout 60s --quiet
wait_for 30 busy a 0.3 || t_note "a not busy after 30 s"
wait_periods 8
usage_a=$(cg_cpu_share 3 "$TOP/a")
wait_periods 2
line=$(tline a)
t_note "$line"
w_a=$(avg a cpu.wait 6)
u_a=$(avg a cpu.usage 6)
d_a=$(avg a cpu.demand 6)
w_b=$(avg b cpu.wait 6)
u_b=$(avg b cpu.usage 6)
d_b=$(avg b cpu.demand 6)
record pair_cpu_usage_measured "$usage_a"
record pair_cpu_usage_daemon "$u_a"
record pair_cpu_wait "$w_a"
record pair_cpu_demand "$d_a"
record single_cpu_usage "$u_b"
record single_cpu_wait "$w_b"
record single_cpu_demand "$d_b"
t_note "a (pair on CPU 1): usage $u_a (cpu.stat over 3 s: $usage_a), wait $w_a, demand $d_a"
t_note "b (one burner beside a): usage $u_b, wait $w_b, demand $d_b"
# equal cpu.weight: the groups split the core, a's two threads each wait
# while the other two run
assert_between "a uses about half the core" "$u_a" 0.3 0.7 cores
assert_between "a and b use the core together" "$(calc "$u_a + $u_b")" 0.85 1.1 cores
assert_ge "a's runqueue wait > 0 (two threads, one CPU)" "$w_a" 0.5 cores
assert_ge "a's CPU demand raised above its usage (usage + wait)" "$d_a" "$(calc "$u_a + 0.25")" cores
assert_le "a's CPU demand at most the capacity" "$d_a" 1 cores
t_check "a's estimate says cpu-wait (one of its last 6 periods)" \
	grep -q ' est=cpu-wait ' <<<"$(grep '^fairshared: debug: tenant=a ' "$FS_OUT/fsd.log" | tail -n 6)"
assert_ge "b's runqueue wait > 0 (beside a)" "$w_b" 0.2 cores
assert_ge "b's CPU demand raised above its usage" "$d_b" "$(calc "$u_b + 0.15")" cores
cg_kill "$TOP/a"
cg_kill "$TOP/b"

t_section "one burner alone (tenant b)"
cg_spawn "$TOP/b" stress-ng --cpu 1 --cpu-method loop --timeout 60s --quiet
wait_for 30 busy b || t_note "b not busy after 30 s"
wait_periods 8
line=$(tline b)
t_note "$line"
w_b=$(avg b cpu.wait 6)
u_b=$(avg b cpu.usage 6)
d_b=$(avg b cpu.demand 6)
w_a=$(avg a cpu.wait 6)
record lone_cpu_usage "$u_b"
record lone_cpu_wait "$w_b"
record lone_cpu_demand "$d_b"
t_note "b (lone burner on CPU 1): usage $u_b, wait $w_b, demand $d_b; a (stopped): wait $w_a"
assert_between "b uses about one core" "$u_b" 0.7 1.1 cores
assert_le "b alone: wait ~0" "$w_b" 0.05 cores
assert_le "b alone: demand = usage (within the noise)" "$d_b" "$(calc "$u_b + 0.05")" cores
assert_le "a stopped: no wait" "$w_a" 0.02 cores
cg_kill "$TOP/b"

t_section "reload and stop"
kill -HUP "${BG_PIDS[fsd]}"
wait_for 30 grep -q 'reloaded ' "$FS_OUT/fsd.log" || t_note "no reload line"
wait_periods 2
after_reload=$(ours)
record progs_after_reload "$after_reload"
assert_eq "reload: same programs, none leaked" "$after_reload" 3
bg_stop fsd
rc=$?
assert_eq "daemon exit status after SIGTERM" "$rc" 0
gone() { (($(ours) == 0)); }
wait_for 5 gone
after_stop=$(ours)
record progs_after_sigterm "$after_stop"
assert_eq "after SIGTERM: bpftool prog show lists none of ours" "$after_stop" 0

t_section "--once --dry-run"
"$FSD" --config "$CONF" --dry-run --once >"$FS_OUT/once.out" 2>"$FS_OUT/once.log"
rc=$?
assert_eq "--once exit status" "$rc" 0
t_check "--once printed both tenants" grep -q '^tenant=b ' "$FS_OUT/once.out"
wait_for 5 gone
assert_eq "after --once: bpftool prog show lists none of ours" "$(ours)" 0

t_section "bpf_wait = approx"
sed 's/^sampler = bpf$/sampler = bpf\nbpf_wait = approx/' "$CONF" >"$STATE/approx.conf"
"$FSD" --config "$STATE/approx.conf" --dry-run --once >/dev/null 2>"$FS_OUT/approx.log"
rc=$?
assert_eq "bpf_wait = approx: --once exit status" "$rc" 0
t_check "log: the sched program loaded in approximate mode" \
	grep -q "eBPF counters loaded (sched net), approximate runqueue wait, net attached at $CG_ROOT/$TOP\$" "$FS_OUT/approx.log"
wait_for 5 gone

t_section "sampler = bpf where eBPF cannot attach"
# net on a cgroup_root that is not cgroup2 (a tmpfs copy of the tree): the
# load fails and sampler = bpf refuses to start; auto falls back, once.
mkdir -p "$STATE/fake/$TOP/a" "$STATE/fake/$TOP/b"
sed "s|^cgroup_root = .*|cgroup_root = $STATE/fake|" "$CONF" >"$STATE/bad.conf"
"$FSD" --config "$STATE/bad.conf" --dry-run --once >/dev/null 2>"$FS_OUT/bad.log"
rc=$?
t_note "$(tail -n 2 "$FS_OUT/bad.log" | tr '\n' ' ')"
assert_eq "sampler = bpf, load failure: exit 1 at start" "$rc" 1
t_check "the reason is logged" grep -q 'cannot load eBPF counters: ' "$FS_OUT/bad.log"
sed -i 's/^sampler = bpf/sampler = auto/' "$STATE/bad.conf"
"$FSD" --config "$STATE/bad.conf" --dry-run --once >/dev/null 2>"$FS_OUT/auto.log"
rc=$?
assert_eq "sampler = auto: falls back, exit 0" "$rc" 0
n=$(grep -c 'eBPF counters not loaded' "$FS_OUT/auto.log")
assert_eq "sampler = auto: fallback logged once" "$n" 1
wait_for 5 gone
assert_eq "after the failed loads: none of ours" "$(ours)" 0

t_done
