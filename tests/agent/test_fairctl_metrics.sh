#!/bin/sh
# SPDX-License-Identifier: MIT
# The Prometheus textfile of fairshared --dry-run (metrics_file, written each
# period) over a fake cgroupfs tree (test_fairctl_lib.sh), period 100 ms (the minimum).
# python3 parses it strictly (text exposition format 0.0.4: HELP/TYPE before
# samples, metric and label names, escaped label values, float values,
# unique series, final newline) and checks the conventions (fairshare_
# prefix, _total counters, ratios in [0, 1], tenant/resource labels only)
# and the values (a's cpu allocation 1.5 of 4 cores = 0.375). A reader loop
# then races the writer for 3 s: every read must parse completely and the
# period counter never goes back (rename makes each file whole).
#
# Usage: test_fairctl_metrics.sh FAIRSHARED FAIRCTL SRCDIR
set -eu
FAIRSHARED=$1
. "$3/test_fairctl_lib.sh"
PYTHON=${PYTHON:-python3}

DIR=$(mktemp -d)
trap 'stop_daemon; rm -rf "$DIR"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

setup_daemon_dir psdsf 100ms
start_daemon "$FAIRSHARED" || fail "daemon start"

"$PYTHON" - "$METRICS" <<'PY' || fail "metrics file check"
import math, re, sys, time

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*$")
SAMPLE = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)')

def parse(text):
    if not text.endswith("\n"):
        raise ValueError("no final newline (half-written?)")
    types, helps, series = {}, {}, {}
    for n, line in enumerate(text.split("\n")[:-1], 1):
        if line.startswith("# HELP "):
            name = line.split(" ", 3)[2]
            assert NAME.match(name) and name not in helps, (n, line)
            helps[name] = True
            continue
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ")
            assert typ in ("gauge", "counter", "untyped"), (n, line)
            assert name not in types, ("TYPE twice", n, name)
            types[name] = typ
            continue
        assert not line.startswith("#") and line.strip(), (n, line)
        m = SAMPLE.match(line)
        assert m, ("bad sample line", n, line)
        name, labels_s, value = m.group(1), m.group(3), m.group(4)
        assert name in types, ("sample before its TYPE", n, name)
        labels = {}
        rest = labels_s or ""
        while rest:
            lm = LABEL.match(rest)
            assert lm, ("bad labels", n, line)
            assert lm.group(1) not in labels, ("label twice", n)
            labels[lm.group(1)] = lm.group(2)
            rest = rest[lm.end():]
        v = float(value)  # accepts NaN, +Inf, -Inf
        key = (name, tuple(sorted(labels.items())))
        assert key not in series, ("duplicate series", n, key)
        series[key] = v
    return types, series

def check(types, series):
    for name, typ in types.items():
        assert name.startswith("fairshare_"), name
        assert (typ == "counter") == name.endswith("_total"), (name, typ)
    for (name, labels), v in series.items():
        for k, _ in labels:
            assert k in ("tenant", "resource", "policy", "mode"), (name, k)
        if name.endswith("_ratio") and name not in ("fairshare_tenant_gap_ratio",
                                                    "fairshare_tenant_limit_ratio"):
            assert 0 <= v <= 1 + 1e-9, (name, labels, v)
    get = lambda name, **l: series[(name, tuple(sorted(l.items())))]
    assert get("fairshare_tenant_allocation_ratio", tenant="a", resource="cpu") == 0.375
    assert get("fairshare_tenant_granted_ratio", tenant="b") == 0.75
    assert get("fairshare_tenant_entitlement_ratio", tenant="c") == 0.5
    assert get("fairshare_resource_saturated", resource="cpu") == 1
    assert get("fairshare_resource_saturated", resource="memory") == 0
    assert get("fairshare_resource_bottleneck", resource="cpu") == 1
    assert get("fairshare_resource_bottleneck", resource="memory") == 0
    assert get("fairshare_resource_capacity_cores", resource="cpu") == 4
    assert get("fairshare_tenant_cpu_quota_seconds", tenant="a") == 0.15
    assert get("fairshare_tenant_memory_high_bytes", tenant="a") == math.inf
    assert get("fairshare_tenant_bottleneck", tenant="a", resource="cpu") == 1
    assert get("fairshare_dry_run") == 1
    tenants = {dict(l).get("tenant") for (n, l) in series if n == "fairshare_tenant_weight"}
    assert tenants == {"a", "b", "c"}, tenants
    return get("fairshare_periods_total")

path = sys.argv[1]
check(*parse(open(path).read()))

# race the writer: every read whole, the counter monotonic
end, last, seen, reads = time.time() + 3, -1, set(), 0
while time.time() < end:
    with open(path) as f:
        text = f.read()
    p = check(*parse(text))
    assert p >= last, (p, last)
    last = p
    seen.add(p)
    reads += 1
assert len(seen) >= 10, ("the writer did not move", len(seen))
print("ok: %d reads, %d distinct periods" % (reads, len(seen)))
PY

stop_daemon
for f in "$METRICS".tmp.*; do
	[ -e "$f" ] && fail "temporary file left behind: $f"
done
echo ok
