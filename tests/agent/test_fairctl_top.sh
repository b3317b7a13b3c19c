#!/bin/sh
# SPDX-License-Identifier: MIT
# fairctl top in a real terminal: tmux (its own server socket in $DIR) runs
# it against fairshared --dry-run over a fake cgroupfs tree
# (test_fairctl_lib.sh); send-keys presses keys, capture-pane reads the
# screen. Checks the tenants are shown, sort keys reorder them, + changes
# the refresh delay, h shows help, q exits 0 and leaves the terminal as it
# was (alternate screen gone, canonical mode and echo back on). Then batch
# mode (stdout not a TTY, -n 2) prints two plain frames.
#
# Orders (usage is 0 cpu and 100 MiB each in the fake tree): by cpu use,
# ties by cpu allocation (a 1.5, b 1.5, c 1.0) -> a b c; by gap (a 0.25,
# b 0.25, c 0.5) -> c a b; by memory use (ties) then memory allocation
# (a 477M, b 1.4G, c 488M) -> b c a.
#
# Usage: test_fairctl_top.sh FAIRSHARED FAIRCTL SRCDIR
set -eu
FAIRSHARED=$1
FAIRCTL=$2
. "$3/test_fairctl_lib.sh"

DIR=$(mktemp -d)
TMUX_SOCK="$DIR/tmux.sock"
tm() { tmux -S "$TMUX_SOCK" "$@"; }
cleanup() {
	tm kill-server 2>/dev/null || true
	stop_daemon
	rm -rf "$DIR"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	echo "--- screen:" >&2
	tm capture-pane -p -t top 2>/dev/null >&2 || true
	exit 1
}

screen() { tm capture-pane -p -t top; }

# wait_for TEXT: until the screen contains TEXT (5 s)
wait_for() {
	i=0
	while [ $i -lt 50 ]; do
		if screen | grep -qF -- "$1"; then return 0; fi
		sleep 0.1
		i=$((i + 1))
	done
	fail "screen never showed '$1'"
}

# order: the tenant names in screen order
order() { screen | awk '$1 ~ /^[abc]$/ && NF > 8 { printf "%s", $1 }'; }

wait_order() {
	i=0
	while [ $i -lt 50 ]; do
		if [ "$(order)" = "$1" ]; then return 0; fi
		sleep 0.1
		i=$((i + 1))
	done
	fail "order is '$(order)', wanted '$1'"
}

setup_daemon_dir psdsf
start_daemon "$FAIRSHARED" || fail "daemon start"

tm -f /dev/null new-session -d -s top -x 150 -y 30 \
	"echo before-top; '$FAIRCTL' top --socket '$SOCK' -d 0.3; echo EXIT=\$?; stty -a; sleep 60"
wait_for "TENANT"
wait_for "policy psdsf"
wait_order abc
screen | grep -q "sort: cpu" || fail "default sort"

tm send-keys -t top g
wait_for "sort: gap"
wait_order cab
tm send-keys -t top g
wait_for "sort: gap (reversed)"
tm send-keys -t top m
wait_for "sort: memory"
wait_order bca
tm send-keys -t top c
wait_order abc

tm send-keys -t top +
wait_for "refresh 0.4 s"
tm send-keys -t top -- -
tm send-keys -t top -- -
wait_for "refresh 0.2 s"
tm send-keys -t top Space
wait_for "TENANT"

tm send-keys -t top h
wait_for "fairctl top keys"
tm send-keys -t top x
wait_for "TENANT"

tm send-keys -t top q
wait_for "EXIT=0"
# the alternate screen is gone: what was there before is back
screen | grep -q "before-top" || fail "screen not restored"
if screen | grep -q "TENANT"; then fail "top's screen left behind"; fi
screen | grep -qE "(^| )icanon( |$)" || fail "terminal left in non-canonical mode"
screen | grep -qE "(^| )echo( |$)" || fail "terminal left without echo"

# batch: not a TTY -> plain frames, -n 2 stops after two
"$FAIRCTL" top --socket "$SOCK" -n 2 -d 0.2 >"$DIR/batch.txt" || fail "batch exit status"
[ "$(grep -c '^TENANT' "$DIR/batch.txt")" = 2 ] || fail "batch frames: $(cat "$DIR/batch.txt")"
if grep -q "$(printf '\033')" "$DIR/batch.txt"; then fail "escape sequences in batch output"; fi
grep -q "^c .* 0.00/1.00 " "$DIR/batch.txt" || fail "batch row of c: $(cat "$DIR/batch.txt")"

# no daemon: a message, exit 1, terminal untouched
stop_daemon
if "$FAIRCTL" top --socket "$SOCK" -b -n 1 2>"$DIR/err.txt"; then fail "top without daemon"; fi
grep -q "cannot reach fairshared" "$DIR/err.txt" || fail "no-daemon message"
echo ok
