#!/bin/bash
# e2e tests 6 and 7 (issue 7): crash safety and robustness.
#  6. kill -9 leaves the daemon's values; `fairshared --release` restores
#     every saved original; a normal stop with on_exit=restore does too.
#  7. a bad config is refused with file:line (exit 78); rmdir of a tenant's
#     cgroup while the daemon runs does not crash it, and re-creating the
#     cgroup resumes enforcement.
#  drift: an outside `echo max 100000 > cpu.max` is written over within 2
#     periods, logged with both values, counted in status, shown by explain.
#  templates: a cgroup created under a [template.NAME] glob is a tenant in
#     the period that notices it; its removal leaves no warning, no error
#     and no saved original.
. "$FS_SRC/tests/vm/lib.sh"
. "$FS_SRC/tests/vm/e2e-lib.sh"
trap e2e_cleanup EXIT
T=$E2E_TOP
FSD=$(e2e_fsd) || { t_fail "fairshared built in $FS_BUILD"; t_done; }

conf=$FS_OUT/e2e-safety.conf
e2e_conf "$conf" 0.3 psdsf
echo "io.disk0 = $SCRATCH $FS_VM_DISK_BPS $FS_VM_DISK_BPS" >>"$conf"
e2e_tenant "$conf" a 2
e2e_tenant "$conf" b 1
t_check "tenant cgroups created" eval 'e2e_setup && e2e_tenants a b'

# Originals an operator might have set; the daemon must give them back.
FILES=(cpu.max cpu.weight memory.high memory.max memory.low io.weight io.max)
cg_set $T/a cpu.max "80000 100000"
cg_set $T/a cpu.weight 50
cg_set $T/a memory.high $((600 * MiB))
cg_set $T/a memory.max $((800 * MiB))
cg_set $T/b cpu.weight 300
cg_set $T/b memory.high $((700 * MiB))
cg_set $T/b memory.low $((5 * MiB)) # the daemon writes the share there
[[ -e $(cg_path $T/b)/io.weight ]] && cg_set $T/b io.weight "default 50"
cg_set $T/b io.max "$(scratch_dev) wbps=$((100 * MiB))"
declare -A orig=()
snapshot() { # NAME ARRAY: every file of both tenants into ARRAY[tenant/file]
	local -n into=$1
	local n f
	for n in a b; do
		for f in "${FILES[@]}"; do into[$n/$f]=$(cat "$(cg_path $T/$n)/$f" 2>/dev/null); done
	done
}
snapshot orig
for k in a/cpu.max a/cpu.weight a/memory.high b/cpu.weight b/io.max; do t_note "original $k = ${orig[$k]}"; done

# all_restored LABEL: each file equals its original.
all_restored() {
	local -A cur=()
	local k bad=()
	snapshot cur
	for k in "${!orig[@]}"; do [[ ${cur[$k]} == "${orig[$k]}" ]] || bad+=("$k='${cur[$k]}' (was '${orig[$k]}')"); done
	if ((${#bad[@]} == 0)); then t_ok "$1: all ${#orig[@]} files hold their originals"; else t_fail "$1: ${bad[*]}"; fi
}

# daemon_wrote: a's cpu.max is the daemon's, not the original.
daemon_wrote() { [[ $(cg_get $T/a cpu.max) != "${orig[a/cpu.max]}" && $(cg_get $T/b cpu.weight) != "${orig[b/cpu.weight]}" ]]; }

t_section "test 6: kill -9, then fairshared --release"
cg_spawn $T/a cpu_load 2 90
cg_spawn $T/b cpu_load 2 90
fsd_start fsd "$conf"
t_check "the daemon enforces (cpu.max and cpu.weight changed)" wait_for 30 daemon_wrote
fsd_wait_periods fsd 3 20
t_note "a: cpu.max '$(cg_get $T/a cpu.max)' cpu.weight $(cg_get $T/a cpu.weight)"
t_check "writer state saved in $E2E_STATE" test -s $E2E_STATE/writer.state
kill -KILL "${BG_PIDS[fsd]}"
wait "${BG_PIDS[fsd]}" 2>/dev/null
unset "BG_PIDS[fsd]"
t_check "after kill -9 the daemon's values stay" daemon_wrote
"$FSD" --release --config "$conf" >"$FS_OUT/release.log" 2>&1
rc=$?
sed 's/^/#   /' "$FS_OUT/release.log"
assert_eq "fairshared --release exits 0" "$rc" 0
all_restored "after --release"

t_section "test 6: normal stop with on_exit=restore"
fsd_start fsd2 "$conf"
t_check "the daemon enforces again" wait_for 30 daemon_wrote
fsd_wait_periods fsd2 3 20
fsd_stop fsd2
assert_eq "SIGTERM: exit status 0" "$?" 0
t_check "log says restored" grep -q "restored the original cgroup values" "$(fsd_log fsd2)"
all_restored "after SIGTERM"

t_section "test 7: rmdir of a tenant's cgroup while running"
fsd_start fsd3 "$conf"
t_check "enforcing" wait_for 30 daemon_wrote
cg_remove $T/a
t_check "a's cgroup removed" test ! -d "$(cg_path $T/a)"
fsd_wait_periods fsd3 6 20
t_check "daemon alive 6 periods after the rmdir" alive "${BG_PIDS[fsd3]}"
lb=$(fsd_line fsd3 b)
t_note "plan b alone: ${lb#*debug: }"
cg_create $T/a
cg_spawn $T/a cpu_load 2 60
a_enforced() {
	local p l
	p=$(fsd_period fsd3)
	l=$(fsd_line fsd3 a "$p")
	[[ $(kv "$l" write) == 1 && $(kv "$l" cpu.max) != "max 100000" && $(cg_get $T/a cpu.max) == "$(kv "$l" cpu.max)" ]]
}
t_check "re-created a: cpu.max enforced again and equal to the plan" wait_for 40 a_enforced
la=$(fsd_line fsd3 a)
t_note "plan a after re-creation: ${la#*debug: }"
record a_cpu_max_after_recreate "$(cg_get $T/a cpu.max)"
t_check "daemon still alive" alive "${BG_PIDS[fsd3]}"

t_section "drift: someone else's write is written over within 2 periods"
FCTL=$(fs_bin fairctl)
ours=$(cg_get $T/a cpu.max)
# The daemon is stopped around the echo, so that the period it is in is
# known: p0 logged, p0 + 1 at most under way (its apply maybe done), so
# the correction comes in period p0 + 2 at the latest.
kill -STOP "${BG_PIDS[fsd3]}"
p0=$(fsd_period fsd3)
cg_set $T/a cpu.max "max 100000"
kill -CONT "${BG_PIDS[fsd3]}"
t_note "after period $p0: echo 'max 100000' > a/cpu.max (ours: '$ours')"
corrected() { [[ $(cg_get $T/a cpu.max) != "max 100000" ]]; }
t_check "a's cpu.max is the daemon's again" wait_for 20 corrected
# the period that corrected it: the one after the last logged before the line
pc=$(awk '/^fairshared: debug: period [0-9]+:/ { p = $4 + 0 }
	/changed by someone else/ && /cpu.max/ { print p + 1; exit }' "$(fsd_log fsd3)")
t_note "drift line: $(grep -m1 'changed by someone else' "$(fsd_log fsd3)")"
t_check "the log names the file and both values" \
	grep -q "a/cpu.max is \"max 100000\", changed by someone else (we wrote" "$(fsd_log fsd3)"
if [[ -n $pc ]] && ((pc - p0 <= 2)); then
	t_ok "corrected in period $pc, within 2 periods of the echo (period $p0)"
else
	t_fail "corrected in period '${pc:-never}', echo after period $p0"
fi
record drift_correction_periods "$((pc - p0))"
st=$("$FCTL" status --json --socket "$E2E_STATE/control.sock" 2>&1)
dt=$(sed -n 's/.*"drift_corrected_total": *\([0-9]*\).*/\1/p' <<<"$st" | head -n 1)
t_check "status counts the correction (drift_corrected_total=${dt:-none})" test "${dt:-0}" -ge 1
ex=$("$FCTL" explain --socket "$E2E_STATE/control.sock" a 2>&1)
t_note "explain a: $(grep -A2 'in force:' <<<"$ex" | tr '\n' '|')"
t_check "explain shows cpu.max in force beside the value written" \
	grep -qE 'cpu\.max +written "[^"]+", in force "[^"]+"' <<<"$ex"
fsd_stop fsd3
assert_eq "stopped with status 0" "$?" 0

t_section "templates: a matching cgroup is a tenant within one period and leaves cleanly"
tconf=$FS_OUT/e2e-template.conf
cp "$conf" "$tconf"
printf '\n[template.users]\nmatch = %s/users/u-*\nweight = 1\n' "$T" >>"$tconf"
cg_create $T/users
fsd_start fsd4 "$tconf"
t_check "enforcing (a and b)" wait_for 30 daemon_wrote
fsd_wait_periods fsd4 2 20
cg_create $T/users/u-1
cg_spawn $T/users/u-1 cpu_load 1 40
u_enforced() {
	local l
	l=$(fsd_line fsd4 u-1)
	[[ -n $l && $(kv "$l" write) == 1 && $(cg_get $T/users/u-1 cpu.max) == "$(kv "$l" cpu.max)" ]]
}
t_check "u-1 is a tenant, its cpu.max written as planned" wait_for 20 u_enforced
pj=$(awk '/^fairshared: debug: period [0-9]+:/ { p = $4 + 0 }
	/the cgroups the templates match changed/ { print p + 1; exit }' "$(fsd_log fsd4)")
pt=$(awk '/^fairshared: debug: period [0-9]+:/ { p = $4 + 0 }
	/^fairshared: debug: tenant=u-1 / { print p; exit }' "$(fsd_log fsd4)")
t_note "template reload in period ${pj:-?}; u-1 first in period ${pt:-?}"
t_check "u-1 is in the plan of the period that noticed it" test "${pj:-x}" = "${pt:-y}"
t_note "u-1: $(fsd_line fsd4 u-1 | cut -c1-200)"
nerr=$(grep -cE 'warning|error' "$(fsd_log fsd4)")
cg_remove $T/users/u-1
t_check "u-1's cgroup removed" test ! -d "$(cg_path $T/users/u-1)"
fsd_wait_periods fsd4 4 20
t_check "u-1 is no tenant any more" eval '[[ -z $(fsd_line fsd4 u-1) ]]'
t_check "no saved original of u-1 left" eval '! grep -q "users/u-1" $E2E_STATE/writer.state'
assert_eq "no warning or error after the removal" "$(grep -cE 'warning|error' "$(fsd_log fsd4)")" "$nerr"
grep -E 'u-1' "$(fsd_log fsd4)" | grep -v debug | sed 's/^/#   /'
fsd_stop fsd4
assert_eq "stopped with status 0" "$?" 0
cg_remove $T/users

t_section "test 7: bad configs are refused with file:line"
cg_kill $T/a
cg_kill $T/b
rm -rf $E2E_STATE
# bad_conf NAME KEY BAD_LINE: the good config with KEY's line replaced by
# BAD_LINE (or BAD_LINE added after [agent] when KEY is "-"); expect exit 78
# and "FILE:LINE:" of that line in the message.
bad_conf() {
	local f=$FS_OUT/bad-$1.conf out rc line
	if [[ $2 == - ]]; then
		sed "s|^\[agent\]\$|[agent]\n$3|" "$conf" >"$f"
	else
		sed "s|^$2 = .*|$3|" "$conf" >"$f"
	fi
	line=$(grep -nxF "$3" "$f" | cut -d: -f1)
	out=$("$FSD" --config "$f" --once --dry-run 2>&1)
	rc=$?
	t_note "$1: $out"
	assert_eq "bad config ($1): exit 78" "$rc" 78
	if [[ -n $line && $out == *"$f:$line:"* ]]; then
		t_ok "bad config ($1): message names $f:$line"
	else
		t_fail "bad config ($1): no $f:${line:-?} in '$out'"
	fi
}
bad_conf interval interval "interval = banana"
bad_conf policy policy "policy = fifo"
bad_conf unknown-key - "colour = blue"
bad_conf disk io.disk0 "io.disk0 = /dev/nonexistent 1M 1M"
# A bad tenant line: the error names that line.
f=$FS_OUT/bad-weight.conf
cp "$conf" "$f"
printf '\n[tenant.c]\ncgroup = %s\nweight = -3\n' "$T/c" >>"$f"
line=$(grep -n '^weight = -3' "$f" | cut -d: -f1)
out=$("$FSD" --config "$f" --once --dry-run 2>&1)
rc=$?
t_note "weight: $out"
assert_eq "bad config (weight -3): exit 78" "$rc" 78
if [[ $out == *"$f:$line:"* ]]; then t_ok "bad config (weight): message names $f:$line"; else t_fail "bad config (weight): no $f:$line in '$out'"; fi
t_check "no daemon state was written by the refused runs" test ! -e $E2E_STATE/writer.state

((T_FAIL > 0)) && for n in fsd fsd2 fsd3 fsd4; do t_note "--- $n"; e2e_dump $n 8; done
t_done
