#!/bin/sh
# SPDX-License-Identifier: MIT
# Shared by the test_fairctl_*.sh tests (sourced, not run): a fake cgroupfs
# tree, a dry-run config with a control socket and a metrics file in $DIR,
# starting and stopping fairshared.
#
# Scenario (as tests/agent/test_fairshared.c): 4 cores, 8G; tenants a, b and
# c declare cpu 3, cpu 2 and cpu 1 with memory 1G, 2G and 512M. The fake
# counters do not move, so usage is 0 and only cpu can be saturated.

fake_cgroup() { # ROOT NAME
	d="$1/$2"
	mkdir -p "$d"
	printf 'usage_usec 1000\nuser_usec 600\nsystem_usec 400\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n' >"$d/cpu.stat"
	printf 'max 100000\n' >"$d/cpu.max"
	printf '100\n' >"$d/cpu.weight"
	printf '104857600\n' >"$d/memory.current"
	printf 'anon 52428800\nfile 52428800\n' >"$d/memory.stat"
	printf 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n' >"$d/memory.events"
	printf 'max\n' >"$d/memory.high"
	printf 'max\n' >"$d/memory.max"
	: >"$d/io.stat"
	: >"$d/io.max"
	printf 'default 100\n' >"$d/io.weight"
	for p in cpu memory io; do
		printf 'some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n' >"$d/$p.pressure"
	done
	: >"$d/cgroup.procs"
}

# setup_daemon_dir [POLICY [INTERVAL]]: fills $DIR (must exist).
setup_daemon_dir() {
	mkdir -p "$DIR/cg"
	for t in a b c; do fake_cgroup "$DIR/cg" "$t.slice"; done
	SOCK="$DIR/control.sock"
	METRICS="$DIR/metrics.prom"
	cat >"$DIR/fairshare.conf" <<CONF
[agent]
interval = ${2:-200ms}
policy = ${1:-psdsf}
cgroup_root = $DIR/cg
state_dir = $DIR/state
socket = $SOCK
metrics_file = $METRICS
on_exit = restore

[resources]
cpu = 4
memory = 8G

[tenant.a]
cgroup = a.slice
demand = cpu 3, memory 1G

[tenant.b]
cgroup = b.slice
demand = cpu 2, memory 2G

[tenant.c]
cgroup = c.slice
weight = 2
demand = cpu 1, memory 400M
CONF
}

# start_daemon FAIRSHARED: dry-run in the background, waits for the socket
# and a first period.
start_daemon() {
	"$1" --config "$DIR/fairshare.conf" --dry-run >"$DIR/daemon.out" 2>"$DIR/daemon.log" &
	DAEMON_PID=$!
	i=0
	while [ $i -lt 100 ]; do
		if [ -S "$SOCK" ] && [ -s "$METRICS" ]; then
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	echo "fairshared did not come up; its log:" >&2
	cat "$DIR/daemon.log" >&2
	return 1
}

# stop_daemon: SIGTERM; fails unless fairshared exits 0 (sanitizer reports
# make it exit non-zero).
stop_daemon() {
	if [ -n "${DAEMON_PID:-}" ]; then
		kill "$DAEMON_PID" 2>/dev/null || true
		rc=0
		wait "$DAEMON_PID" 2>/dev/null || rc=$?
		DAEMON_PID=
		if [ "$rc" != 0 ]; then
			echo "fairshared exited with status $rc; its log:" >&2
			tail -40 "$DIR/daemon.log" >&2
			return 1
		fi
	fi
}
