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
# Then 5,000 tenants (top once kept its sort index in a 1024-entry stack
# array): fairshared itself refuses more than 1024 [tenant.*] sections, so a
# python3 stand-in on its own socket answers "status" with the real daemon's
# answer, its tenants copied to t0000..t4999 with distinct cpu use (2.9 MB).
# Batch mode must print all 5,000 rows in cpu order in both frames; in the
# terminal the largest user must be on top, c (reverse) must put the
# smallest there, q must exit 0.
#
# Orders (usage is 0 cpu and 100 MiB each in the fake tree): by cpu use,
# ties by cpu allocation (a 1.5, b 1.5, c 1.0) -> a b c; by gap (a 0.25,
# b 0.25, c 0.5) -> c a b; by memory use (ties) then memory allocation
# (a 0.5 x 1G = 512M, b 0.75 x 2G = 1.5G, c 1 x 400M; sizes are binary,
# as systemd reads them) -> b a c.
#
# Usage: test_fairctl_top.sh FAIRSHARED FAIRCTL SRCDIR
set -eu
FAIRSHARED=$1
FAIRCTL=$2
. "$3/test_fairctl_lib.sh"
PYTHON=${PYTHON:-python3}
N_BIG=5000

DIR=$(mktemp -d)
TMUX_SOCK="$DIR/tmux.sock"
tm() { tmux -S "$TMUX_SOCK" "$@"; }
cleanup() {
	tm kill-server 2>/dev/null || true
	if [ -n "${BIG_PID:-}" ]; then kill "$BIG_PID" 2>/dev/null || true; fi
	stop_daemon
	rm -rf "$DIR"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	echo "--- screen:" >&2
	tm capture-pane -p -t "$PANE" 2>/dev/null >&2 || true
	exit 1
}

PANE=top
screen() { tm capture-pane -p -t "$PANE"; }

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
	"echo before-top; '$FAIRCTL' top --socket '$SOCK' -d 0.3; echo EXIT=\$?; stty -a; echo stty-done; sleep 60"
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
wait_order bac
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
# stty's lines come after EXIT=0: on a loaded machine the screen was once
# read between the two, once, in a CI run ("left in non-canonical mode")
wait_for "stty-done"
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

# 5,000 tenants: the stand-in daemon (see the top of this file). It writes
# the names in the expected order (cpu use, largest first) to big.order and
# puts its socket in place only once its answer is ready and it listens.
BIG_SOCK="$DIR/big.sock"
"$PYTHON" - "$SOCK" "$BIG_SOCK" "$N_BIG" "$DIR/big.order" <<'PY' 2>"$DIR/big.log" &
import copy, json, os, socket, sys

real, path, n, order = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def read_line(s):
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        buf += chunk
    return buf

c = socket.socket(socket.AF_UNIX)
c.connect(real)
c.sendall(b'{"command":"status"}\n')
st = json.loads(read_line(c))
c.close()
assert st["ok"] and [t["name"] for t in st["tenants"]] == ["a", "b", "c"], st
tenants = []
for i in range(n):
    t = copy.deepcopy(st["tenants"][i % 3])
    t["name"], t["cgroup"] = "t%04d" % i, "t%04d.slice" % i
    t["usage"]["cpu"] = (i * 7919 % n) / 1000.0  # 7919 is prime: all distinct
    tenants.append(t)
st["tenants"] = tenants
answer = (json.dumps(st, separators=(",", ":")) + "\n").encode()
with open(order, "w") as f:
    f.writelines(t["name"] + "\n" for t in sorted(tenants, key=lambda t: -t["usage"]["cpu"]))
# Bound and listening under another name, then renamed: the socket file
# appears only once connect() works (between bind and listen it refuses,
# which a loaded machine made long enough to hit).
srv = socket.socket(socket.AF_UNIX)
srv.bind(path + ".new")
srv.listen(8)
os.rename(path + ".new", path)
while True:
    c, _ = srv.accept()
    try:
        if json.loads(read_line(c)).get("command") == "status":
            c.sendall(answer)
        else:
            c.sendall(b'{"ok":false,"code":"unknown","error":"status only"}\n')
    except (OSError, ValueError):
        pass
    c.close()
PY
BIG_PID=$!
i=0
while [ ! -S "$BIG_SOCK" ]; do
	[ $i -lt 100 ] || fail "stand-in daemon did not come up: $(cat "$DIR/big.log")"
	sleep 0.1
	i=$((i + 1))
done

"$FAIRCTL" top --socket "$BIG_SOCK" -n 2 -d 0.1 >"$DIR/big.txt" 2>"$DIR/big.err" ||
	fail "batch with $N_BIG tenants: exit status $?: $(head -n 12 "$DIR/big.err")"
[ "$(grep -c '^TENANT' "$DIR/big.txt")" = 2 ] || fail "batch frames with $N_BIG tenants"
for f in 1 2; do
	awk -v f=$f '/^TENANT/ { n++ } n == f && $1 ~ /^t[0-9]+$/ { print $1 }' "$DIR/big.txt" \
	    >"$DIR/big.frame$f"
	cmp -s "$DIR/big.order" "$DIR/big.frame$f" ||
		fail "frame $f with $N_BIG tenants: $(wc -l <"$DIR/big.frame$f") rows," \
		    "first difference: $(diff "$DIR/big.order" "$DIR/big.frame$f" | sed -n 2p)"
done

PANE=big
tm new-session -d -s big -x 150 -y 30 \
	"'$FAIRCTL' top --socket '$BIG_SOCK' -d 0.3; echo EXIT=\$?; sleep 60"
wait_for "TENANT"
first() { screen | awk '$1 ~ /^t[0-9]+$/ && NF > 8 { print $1; exit }'; }
wait_first() {
	i=0
	while [ $i -lt 50 ]; do
		if [ "$(first)" = "$1" ]; then return 0; fi
		sleep 0.1
		i=$((i + 1))
	done
	fail "top row is '$(first)', wanted '$1'"
}
wait_first "$(head -n 1 "$DIR/big.order")"
tm send-keys -t big c
wait_for "sort: cpu (reversed)"
wait_first "$(tail -n 1 "$DIR/big.order")"
tm send-keys -t big q
wait_for "EXIT=0"
kill "$BIG_PID"
wait "$BIG_PID" 2>/dev/null || true
BIG_PID=

# no daemon: a message, exit 1, terminal untouched
stop_daemon
if "$FAIRCTL" top --socket "$SOCK" -b -n 1 2>"$DIR/err.txt"; then fail "top without daemon"; fi
grep -q "cannot reach fairshared" "$DIR/err.txt" || fail "no-daemon message"
echo ok
