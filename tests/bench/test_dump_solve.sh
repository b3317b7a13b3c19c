#!/bin/sh
# SPDX-License-Identifier: MIT
# A benchmark instance dumped with `fairshare-bench --dump` loads in
# `fairctl solve` and every tenant is solved: tenants eligible on ~50 of 100
# pools need several "pools =" lines, and 8 exact numbers must fit a line.
# Usage: test_dump_solve.sh FAIRSHARE_BENCH FAIRCTL
set -eu

BENCH=$1
FAIRCTL=$2
TMP=$(mktemp -d /tmp/test_dump_solve.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

for m in 4 8; do
	"$BENCH" --dump 40,$m,100 >"$TMP/d$m.ini"
	tenants=$(grep -c '^\[tenant\.' "$TMP/d$m.ini")
	pool_lines=$(grep -c '^pools = ' "$TMP/d$m.ini")
	if [ "$pool_lines" -le "$tenants" ]; then
		echo "FAIL: M=$m: $pool_lines pools lines for $tenants tenants, want more" >&2
		exit 1
	fi
	"$FAIRCTL" solve "$TMP/d$m.ini" --json >"$TMP/out$m.json"
	got=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["tenants"]))' \
		"$TMP/out$m.json")
	if [ "$got" != 40 ]; then
		echo "FAIL: M=$m: fairctl solve listed $got tenants, want 40" >&2
		exit 1
	fi
done
echo "ok: dumps with M = 4 and 8, K = 100 load and solve"
