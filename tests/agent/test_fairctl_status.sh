#!/bin/sh
# SPDX-License-Identifier: MIT
# fairctl status/explain/set-weight/release/reload against a running
# fairshared --dry-run over a fake cgroupfs tree (test_fairctl_lib.sh).
#
# The allocation in `status --json` must be the policy library's answer:
# python3 turns the published demands, weights and capacities into a
# scenario file, `fairctl solve --json` solves it independently, and every
# tenant's granted fraction and allocation must match (psdsf and njc).
# Known answer (PS-DSF on one pool = weighted DRF, DESIGN.md), cpu the only
# bottleneck of 4 cores: dominant shares 3/4 x_a, 2/4 x_b, (1/4 x_c)/2;
# c is capped at x_c = 1, then 0.75 x_a = 0.5 x_b and 3 x_a + 2 x_b = 3
# give x_a = 0.5, x_b = 0.75.
#
# Usage: test_fairctl_status.sh FAIRSHARED FAIRCTL SRCDIR
set -eu
FAIRSHARED=$1
FAIRCTL=$2
. "$3/test_fairctl_lib.sh"
PYTHON=${PYTHON:-python3}

DIR=$(mktemp -d)
chmod 0755 "$DIR" # uid nobody reaches the socket in the permission checks
trap 'stop_daemon; rm -rf "$DIR"' EXIT
fail() {
	echo "FAIL: $*" >&2
	[ -f "$DIR/daemon.log" ] && tail -20 "$DIR/daemon.log" >&2
	exit 1
}

compare_with_solve() { # POLICY
	"$FAIRCTL" status --json --socket "$SOCK" >"$DIR/status.json" || fail "status --json"
	"$PYTHON" - "$DIR" "$FAIRCTL" "$1" <<'PY' || fail "status --json differs from fairctl solve ($1)"
import json, subprocess, sys
d, fairctl, policy = sys.argv[1:4]
st = json.load(open(d + "/status.json"))
assert st["policy"] == policy, st["policy"]
res = [r["name"] for r in st["resources"]]
lines = ["[scenario]", "resources = " + ", ".join(res), "[pool.host]",
         "capacity = " + ", ".join(repr(r["capacity"]) for r in st["resources"])]
names = [t["name"] for t in st["tenants"]]
assert names == ["a", "b", "c"], names
for t in st["tenants"]:
    assert t["present"] and t["in_problem"], t["name"]
    lines += ["[tenant.%s]" % t["name"],
              "demand = " + ", ".join(repr(t["demand"][r]) for r in res),
              "weight = %r" % t["weight"], "max_tasks = 1"]
open(d + "/scenario.ini", "w").write("\n".join(lines) + "\n")
out = subprocess.run([fairctl, "solve", d + "/scenario.ini", "--json", "--policy", policy],
                     check=True, capture_output=True, text=True).stdout
solved = {t["name"]: t["tasks"] for t in json.loads(out)["tenants"]}
for t in st["tenants"]:
    x = solved[t["name"]]
    assert abs(t["granted"] - x) < 1e-6, (t["name"], t["granted"], x)
    for r in res:
        want = x * t["demand"][r]
        assert abs(t["allocation"][r] - want) <= 1e-6 * max(1.0, want), (t["name"], r)
if policy == "psdsf":
    got = {t["name"]: round(t["granted"], 6) for t in st["tenants"]}
    assert got == {"a": 0.5, "b": 0.75, "c": 1.0}, got
    cpu = [r for r in st["resources"] if r["name"] == "cpu"][0]
    assert cpu["saturated"] and abs(cpu["allocated"] - 4) < 1e-6
    assert cpu["state"] == "saturated", cpu
    a = st["tenants"][0]
    assert a["bottlenecks"] == ["cpu"] and a["limits"]["cpu.max"] == "150000 100000", a
    assert a["limits"]["written"] is False  # dry-run
    assert abs(a["entitlement"] - 0.25) < 1e-9
print("ok", policy, solved)
PY
}

for policy in psdsf njc; do
	rm -rf "$DIR"/*
	setup_daemon_dir "$policy"
	start_daemon "$FAIRSHARED" || fail "daemon start ($policy)"
	compare_with_solve "$policy"
	if [ "$policy" = njc ]; then
		"$FAIRCTL" explain --socket "$SOCK" a >"$DIR/explain.txt" || fail "explain (njc)"
		grep -q "certificate: \(njc-saturated-resource\|satisfied\)" "$DIR/explain.txt" ||
			fail "njc explain has no certificate: $(cat "$DIR/explain.txt")"
		grep -q "\[holds\]" "$DIR/explain.txt" || fail "njc certificate does not hold"
		stop_daemon
		continue
	fi

	# the human-readable views
	"$FAIRCTL" status --socket "$SOCK" >"$DIR/status.txt" || fail "status"
	grep -q "^policy psdsf" "$DIR/status.txt" || fail "status header"
	grep -q "bottlenecks: cpu (saturated)" "$DIR/status.txt" || fail "status bottlenecks"
	grep -q "^  cpu .*%  saturated$" "$DIR/status.txt" || fail "status resource row state"
	grep -q "^a (a.slice): weight 1, entitlement 25.0%, mode limits" "$DIR/status.txt" ||
		fail "status tenant a: $(cat "$DIR/status.txt")"
	grep -q 'planned    cpu.max "150000 100000"' "$DIR/status.txt" || fail "status limits"
	"$FAIRCTL" explain --socket "$SOCK" a >"$DIR/explain.txt" || fail "explain"
	for want in "bottleneck:  cpu, saturated" "competes with b" "competes with c" \
		"certificate: theorem1-bottleneck" "[holds]" "minimal gap: 0.2500 on cpu"; do
		grep -qF "$want" "$DIR/explain.txt" || fail "explain lacks '$want': $(cat "$DIR/explain.txt")"
	done
	"$FAIRCTL" explain --json --socket "$SOCK" b | "$PYTHON" -c '
import json, sys
e = json.load(sys.stdin)
assert e["tenant"]["name"] == "b" and e["certificate"]["holds"] and e["policy_check"]["holds"], e
assert [c["name"] for c in e["bottlenecks"][0]["competitors"]] == ["a", "c"], e["bottlenecks"]
' || fail "explain --json"
	if "$FAIRCTL" explain --socket "$SOCK" nosuch 2>"$DIR/err.txt"; then fail "explain nosuch"; fi
	grep -q 'no tenant "nosuch"' "$DIR/err.txt" || fail "explain nosuch message"

	# set-weight changes the next period's allocation; reload restores it
	"$FAIRCTL" set-weight --socket "$SOCK" a 3 >/dev/null || fail "set-weight"
	sleep 0.6
	"$FAIRCTL" status --json --socket "$SOCK" | "$PYTHON" -c '
import json, sys
a = json.load(sys.stdin)["tenants"][0]
assert a["weight"] == 3 and abs(a["granted"] - 0.75) < 1e-6, a["granted"]
' || fail "set-weight not applied"
	if "$FAIRCTL" set-weight --socket "$SOCK" a -1 2>/dev/null; then fail "negative weight"; fi
	# issue 16: 1e-300 made status show "cpu 125.0% saturated"
	if "$FAIRCTL" set-weight --socket "$SOCK" a 1e-300 2>"$DIR/err.txt"; then fail "weight 1e-300"; fi
	grep -q "weight must be a number from 1e-06 to 1e+06" "$DIR/err.txt" || fail "weight bound message"
	"$FAIRCTL" status --json --socket "$SOCK" | "$PYTHON" -c '
import json, sys; assert json.load(sys.stdin)["tenants"][0]["weight"] == 3' || fail "refused weight kept"

	# release / reload
	"$FAIRCTL" release --socket "$SOCK" | grep -q "released" || fail "release"
	"$FAIRCTL" status --json --socket "$SOCK" | "$PYTHON" -c '
import json, sys; assert json.load(sys.stdin)["released"] is True' || fail "released flag"
	"$FAIRCTL" reload --socket "$SOCK" | grep -q "reloaded" || fail "reload"
	sleep 0.6
	"$FAIRCTL" status --json --socket "$SOCK" | "$PYTHON" -c '
import json, sys
s = json.load(sys.stdin)
assert s["released"] is False and s["tenants"][0]["weight"] == 1, s["tenants"][0]["weight"]' ||
		fail "reload did not end the release / restore the weight"

	# a caller that is not root: refused by the daemon (SO_PEERCRED)
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		chmod 0666 "$SOCK"
		if setpriv --reuid=65534 --regid=65534 --clear-groups "$FAIRCTL" reload \
			--socket "$SOCK" 2>"$DIR/err.txt"; then
			fail "reload as nobody succeeded"
		fi
		grep -q "permission denied: \"reload\" needs root" "$DIR/err.txt" ||
			fail "nobody reload message: $(cat "$DIR/err.txt")"
		setpriv --reuid=65534 --regid=65534 --clear-groups "$FAIRCTL" status \
			--socket "$SOCK" >/dev/null || fail "status as nobody"
		chmod 0600 "$SOCK"
		if setpriv --reuid=65534 --regid=65534 --clear-groups "$FAIRCTL" status \
			--socket "$SOCK" 2>"$DIR/err.txt"; then
			fail "status through a 0600 socket as nobody"
		fi
		grep -q "permission denied on $SOCK" "$DIR/err.txt" || fail "EACCES message"
	fi
	stop_daemon
	[ ! -e "$SOCK" ] || fail "socket left behind after stop"
done

# no daemon: helpful errors, exit status 1
if "$FAIRCTL" status --socket "$DIR/none.sock" 2>"$DIR/err.txt"; then fail "status without daemon"; fi
grep -q "does not exist (is fairshared running?" "$DIR/err.txt" || fail "ENOENT message"
"$PYTHON" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$DIR/stale.sock"
if "$FAIRCTL" reload --socket "$DIR/stale.sock" 2>"$DIR/err.txt"; then fail "reload on a stale socket"; fi
grep -q "nobody listens on" "$DIR/err.txt" || fail "ECONNREFUSED message"
echo "ok"
