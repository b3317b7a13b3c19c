#!/bin/bash
# vm: systemd
# Issue 15 item 1, the systemd backend, on a real systemd (PID 1 in the VM):
# fairshared runs as the packaged unit with backend = auto and a
# [template.users]; two users' slices (real units, each with a CPU-bound
# service) get their values through systemd's D-Bus API. Asserted:
#  - fairctl status says backend systemd for both (and why);
#  - every property fairshare says it wrote (fairctl explain --json: for a
#    systemd tenant each file's "written" is its unit properties,
#    "CPUQuotaPerSecUSec=670000 CPUQuotaPeriodUSec=100000") is what systemd
#    reports (busctl: the raw D-Bus values), and systemctl show's
#    CPUQuotaPerSecUSec is fairshare's, not the operator's 80 %;
#  - the values survive `systemctl daemon-reload` exactly (CPUQuota in whole
#    percent in systemd's drop-in), with no drift counted;
#  - a `systemctl set-property --runtime CPUQuota=90%` by hand is set back
#    within 2 periods and counted as drift;
#  - `systemctl stop fairshared`, and kill -9 + the unit's ExecStopPost=
#    (fairshared --release), bring every unit property back to its
#    original (the operator's CPUQuota=80%, CPUWeight=50, MemoryHigh=900M).
. "$FS_SRC/tests/vm/lib.sh"
. "$FS_SRC/tests/vm/e2e-lib.sh"

FSD=$(e2e_fsd) || { t_fail "fairshared built in $FS_BUILD"; t_done; }
FCTL=$(fs_bin fairctl) || { t_fail "fairctl built in $FS_BUILD"; t_done; }
D=fairshared
LOG=$(fsd_log $D)
CONF=/etc/fairshare/fairshare.conf
E2E_INTERVAL=0.5

cleanup() {
	systemctl stop fairshared.service 'fsvm-sd-*.service' 2>/dev/null
	cp "$CONF" "$FS_OUT/fairshare.conf" 2>/dev/null
	journalctl -b --no-pager -o short-monotonic >"$FS_OUT/journal.txt" 2>&1
}
trap cleanup EXIT

t_section "systemd: $(systemctl is-system-running 2>&1)"
for uid in 1001 1002; do
	getent passwd $uid >/dev/null ||
		echo "fsvm$uid:x:$uid:$uid:fsvm test user:/nonexistent:/usr/sbin/nologin" >>/etc/passwd
done
A=$(getent passwd 1001 | cut -d: -f1) B=$(getent passwd 1002 | cut -d: -f1)
A=${A//[^A-Za-z0-9_-]/_} B=${B//[^A-Za-z0-9_-]/_}

# --- fairshared as the package installs it (see e2e-systemd.sh) --------------
sed -e "s|@SBINDIR@|${FSD%/*}|g" -e "s|@CONFIG@|$CONF|g" \
	"$FS_SRC/packaging/systemd/fairshared.service.in" >/etc/systemd/system/fairshared.service
mkdir -p /etc/systemd/system/fairshared.service.d /etc/fairshare /etc/sysusers.d /etc/tmpfiles.d
cat >/etc/systemd/system/fairshared.service.d/50-fsvm.conf <<EOF
[Service]
Environment=FAIRSHARED_LOG_LEVEL=debug
StandardOutput=append:$LOG
StandardError=append:$LOG
EOF
cp "$FS_SRC/packaging/systemd/fairshare.sysusers" /etc/sysusers.d/fairshare.conf
cp "$FS_SRC/packaging/systemd/fairshare.tmpfiles" /etc/tmpfiles.d/fairshare.conf
t_check "systemd-sysusers, systemd-tmpfiles" eval \
	'systemd-sysusers && systemd-tmpfiles --create /etc/tmpfiles.d/fairshare.conf'
cat >"$CONF" <<EOF
[agent]
interval = ${E2E_INTERVAL}s
sampler = cgroupfs
backend = auto

[resources]
cpu = 1

[template.users]
match = user.slice/user-*.slice
weight = 1
weight.$A = 2
EOF
t_check "daemon-reload after the install" systemctl daemon-reload
t_check "user.slice on CPU 1, system.slice on CPU 0" eval \
	'systemctl set-property --runtime user.slice AllowedCPUs=1 &&
	 systemctl set-property --runtime system.slice AllowedCPUs=0'

# --- the units' properties ------------------------------------------------------
SD_PROPS=(CPUQuotaPerSecUSec CPUQuotaPeriodUSec CPUWeight MemoryHigh MemoryMax MemoryLow IOWeight)
# unit_props UNIT: the raw D-Bus values (busctl), "Name=value" per line.
unit_props() {
	local obj p
	obj=$(busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
		org.freedesktop.systemd1.Manager GetUnit s "$1" | awk '{ gsub(/"/, "", $2); print $2 }')
	[[ -n $obj ]] || return 1
	for p in "${SD_PROPS[@]}"; do
		echo "$p=$(busctl get-property org.freedesktop.systemd1 "$obj" org.freedesktop.systemd1.Slice "$p" | awk '{ print $2 }')"
	done
}
# props_as_written TENANT UNIT: what fairshare says it wrote is what systemd has.
props_as_written() {
	local props
	props=$(unit_props "$2") || return 1
	"$FCTL" explain --json "$1" 2>/dev/null | python3 -S -c '
import json, sys
have = dict(l.split("=", 1) for l in sys.argv[2].split("\n") if "=" in l)
bad, n = [], 0
for f in json.load(sys.stdin).get("files", []):
    for pair in f.get("written", "").split():
        name, want = pair.split("=", 1)
        if want in ("infinity", "unset"):
            want = str(2**64 - 1)
        if name in have:
            n += 1
            if have[name] != want:
                bad.append("%s=%s (fairshare wrote %s)" % (name, have[name], want))
print("%s: %d properties as written%s" % (sys.argv[1], n, "; " + ", ".join(bad) if bad else ""))
sys.exit(1 if bad or n == 0 else 0)' "$2" "$props"
}
backend_of() {
	"$FCTL" status --json 2>/dev/null | python3 -S -c '
import json, sys
for t in json.load(sys.stdin).get("tenants", []):
    if t.get("name") == sys.argv[1]:
        print(t.get("backend", ""), "|", t.get("backend_reason", ""))' "$1"
}
drifted_total() { awk '/^fairshared: debug: period [0-9]+:/ { n += $NF } END { print n + 0 }' "$LOG"; }
drift_after() {
	awk -v p0="$1" '/^fairshared: debug: period [0-9]+:/ && $4 + 0 > p0 && / drifted [1-9]/ { print $4 + 0; exit }' "$LOG"
}

# --- originals -------------------------------------------------------------------
# (each load is delegated as a login's user@UID.service is, so that systemd
# enables cpu and memory down to the user's slice, as on a login node)
t_section "two users' loads, and values an operator set with systemd"
for uid in 1001 1002; do
	t_check "a CPU-bound service as $uid in user-$uid.slice" \
		systemd-run --quiet --uid=$uid --slice=user-$uid.slice --unit=fsvm-sd-$uid \
		-p Delegate="pids memory cpu" stress-ng --cpu 1 --cpu-method loop --timeout 300s --quiet
done
t_check "set-property: user-1001 CPUQuota=80%, user-1002 CPUWeight=50 MemoryHigh=900M" eval \
	'systemctl set-property --runtime user-1001.slice CPUQuota=80% &&
	 systemctl set-property --runtime user-1002.slice CPUWeight=50 MemoryHigh=900M'
declare -A oprops=()
for u in 1001 1002; do oprops[$u]=$(unit_props user-$u.slice | tr '\n' ' '); done
t_note "user-1001.slice: ${oprops[1001]}"
t_note "user-1002.slice: ${oprops[1002]}"
t_check "the originals are the operator's (800000 us/s, 50, 943718400)" eval \
	'[[ ${oprops[1001]} == *CPUQuotaPerSecUSec=800000* && ${oprops[1002]} == *CPUWeight=50* && ${oprops[1002]} == *MemoryHigh=943718400* ]]'
props_restored() {
	local u now
	for u in 1001 1002; do
		now=$(unit_props user-$u.slice | tr '\n' ' ')
		[[ $now == "${oprops[$u]}" ]] || { echo "user-$u.slice: $now (was ${oprops[$u]})"; return 1; }
	done
	echo "both units' properties are the originals"
}
both_as_written() { props_as_written "$A" user-1001.slice && props_as_written "$B" user-1002.slice; }
ours() { [[ $(unit_props user-1001.slice | tr '\n' ' ') != "${oprops[1001]}" ]] && both_as_written; }

# --- start ---------------------------------------------------------------------------
t_section "systemctl start fairshared (backend = auto)"
t_check "fairshared.service starts" systemctl start fairshared.service
t_check "both users are tenants written through systemd" wait_for 30 eval \
	'[[ $(backend_of "$A") == systemd* && $(backend_of "$B") == systemd* ]]'
t_note "status $A: backend $(backend_of "$A")"
t_check "fairctl status prints the backend" eval \
	'"$FCTL" status | grep -qE "^ +backend +systemd \(a unit systemd manages"'
t_check "the units' properties are what fairshare wrote" wait_for 30 ours
both_as_written | sed 's/^/#   /'
t_note "systemctl show user-1001.slice: $(systemctl show -p CPUQuotaPerSecUSec,CPUQuotaPeriodUSec,CPUWeight user-1001.slice | tr '\n' ' ')"
t_check "systemctl show: user-1001's CPUQuotaPerSecUSec is fairshare's (not 800ms)" eval \
	'q=$(systemctl show -P CPUQuotaPerSecUSec user-1001.slice); [[ -n $q && $q != 800ms && $q != infinity ]]'
t_note "explain $A: $("$FCTL" explain "$A" 2>&1 | grep -A3 -E '^ +backend:' | tr -s ' ' | tr '\n' '|')"
t_check "cpu.max is what systemd makes of the properties" eval \
	'q=$(busctl get-property org.freedesktop.systemd1 /org/freedesktop/systemd1/unit/user_2d1001_2eslice org.freedesktop.systemd1.Slice CPUQuotaPerSecUSec | cut -d" " -f2);
	 [[ $(cat /sys/fs/cgroup/user.slice/user-1001.slice/cpu.max) == "$((q / 10)) 100000" ]]'
t_check "no cgroupfs write into a systemd tenant (no 'orig' record)" eval \
	'! grep -q "^orig " /run/fairshare/writer.state && grep -q "^unit user.slice/user-1001.slice cpu.max " /run/fairshare/writer.state'

# --- daemon-reload ------------------------------------------------------------------
t_section "systemctl daemon-reload"
fsd_wait_periods $D 2 20
d0=$(drifted_total)
t_check "daemon-reload" systemctl daemon-reload
fsd_wait_periods $D 3 20
t_check "after daemon-reload the properties are still fairshare's, exactly" both_as_written
assert_eq "nothing to correct after daemon-reload (no drift)" "$(($(drifted_total) - d0))" 0
t_note "drop-in: $(cat /run/systemd/system.control/user-1001.slice.d/50-CPUQuota.conf 2>&1 | tr '\n' ' ')"

# --- set-property by hand --------------------------------------------------------------
t_section "systemctl set-property by hand"
p0=$(fsd_period $D)
t_check "systemctl set-property --runtime user-1001.slice CPUQuota=90%" \
	systemctl set-property --runtime user-1001.slice CPUQuota=90%
t_check "set back: the properties are fairshare's again" wait_for 20 eval \
	'[[ $(systemctl show -P CPUQuotaPerSecUSec user-1001.slice) != 900ms ]] && both_as_written'
pc=$(drift_after "$p0")
if [[ -n $pc ]] && ((pc - p0 <= 2)); then
	t_ok "corrected in period $pc, within 2 periods of set-property (after period $p0)"
else
	t_fail "corrected in period '${pc:-never}', set-property after period $p0"
fi
record sdb_drift_correction_periods "$((${pc:-999} - p0))"
t_note "$(grep -m1 'user-1001.slice/cpu.max is "CPUQuotaPerSecUSec=900000' "$LOG")"

# --- stop, kill -9 ----------------------------------------------------------------------
t_section "systemctl stop fairshared"
t_check "systemctl stop" systemctl stop fairshared.service
assert_eq "stopped cleanly" "$(systemctl show -P Result fairshared.service)" success
t_check "after stop: the units' properties are the originals" props_restored
t_check "after stop: nothing saved" test ! -s /run/fairshare/writer.state

t_section "kill -9, then the unit's ExecStopPost="
t_check "fairshared.service starts again" systemctl start fairshared.service
t_check "fairshare's values again" wait_for 30 ours
pid=$(systemctl show -P MainPID fairshared.service)
t_check "kill -9 the main process ($pid)" kill -9 "$pid"
# ExecStopPost= runs `fairshared --release` at once; Restart= starts the
# daemon 5 s later, which sets its values again.
t_check "ExecStopPost restored every property" wait_for 30 props_restored
t_note "$(grep -E 'release' "$LOG" | tail -2 | tr '\n' '|')"
t_check "Restart=on-failure: fairshare's values again" wait_for 60 ours
t_check "systemctl stop" systemctl stop fairshared.service
t_check "after the last stop: the originals" props_restored
((T_FAIL > 0)) && tail -40 "$LOG" | sed 's/^/#   /'
t_done
