#!/bin/bash
# vm: systemd
# Issue 15 on a real systemd host: Debian's systemd is PID 1 (tests/vm/run
# boots it for this "# vm: systemd" line), fairshared runs as the packaged
# unit (packaging/systemd/fairshared.service.in, pointed at the build dir)
# with a [template.users] for user.slice/user-*.slice, and the tenants are
# real units: `systemd-run --uid=UID --slice=user-UID.slice` services
# delegated like a login's user@UID.service (pids memory cpu), and a
# `systemd-run --scope` in jobs.slice. Asserted:
#  - a new user slice (and a scope) is a tenant in the period that noticed
#    it, its cpu.max as planned; its removal (systemctl stop) leaves no
#    warning, no error and no saved original;
#  - measured CPU between two users' CPU-bound loads follows the template
#    weights (2:1) within 5 % (the median of three 5 s windows);
#  - `systemctl daemon-reload` leaves the plan in force, and a hand-made
#    `systemctl set-property --runtime user-UID.slice CPUQuota=` is written
#    over within 2 periods (drift correction);
#  - `systemctl stop fairshared` and `kill -9` + the unit's ExecStopPost=
#    (fairshared --release) bring every file back to its original value,
#    which is what systemd's own unit properties say.
# The systemd backend (fairshared's backend = auto on this host): both
# users' slices are written through systemd's D-Bus API, so
#  - `fairctl status` says backend systemd for them;
#  - every property fairshare says it wrote (explain: "CPUQuotaPerSecUSec=
#    670000 CPUQuotaPeriodUSec=100000") is what systemd reports (busctl:
#    the raw D-Bus values), the plan's within systemd's rounding (CPUQuota in
#    whole percent: 10 ms per second), and the files are what systemd makes
#    of the properties;
#  - they survive daemon-reload unchanged, with no drift counted;
#  - a new user slice is written through systemd too, the delegated scope
#    (Delegate=yes) through cgroupfs;
#  - fairctl release, stop and kill -9 + ExecStopPost= bring the units'
#    properties (not only the files) back to the originals; fairctl reload
#    enforces again after a release.
. "$FS_SRC/tests/vm/lib.sh"
. "$FS_SRC/tests/vm/e2e-lib.sh"

FSD=$(e2e_fsd) || { t_fail "fairshared built in $FS_BUILD"; t_done; }
FCTL=$(fs_bin fairctl) || { t_fail "fairctl built in $FS_BUILD"; t_done; }
D=fairshared # the daemon's name for the fsd_* helpers: log $FS_OUT/fairshared.log
LOG=$(fsd_log $D)
STATE=/run/fairshare
CONF=/etc/fairshare/fairshare.conf
E2E_INTERVAL=0.5
FILES=(cpu.max cpu.weight memory.high memory.max)

cleanup() {
	systemctl stop fairshared.service 'fsvm-load-*.service' 'job-*.scope' 2>/dev/null
	cp "$CONF" "$FS_OUT/fairshare.conf" 2>/dev/null
	journalctl -b --no-pager -o short-monotonic >"$FS_OUT/journal.txt" 2>&1
}
trap 'cleanup; _bg_cleanup' EXIT

t_section "systemd: $(systemctl is-system-running 2>&1)"
t_note "$(systemd-analyze time 2>&1 | head -1)"
t_note "failed units: $(systemctl --no-legend --plain list-units --state=failed | tr '\n' ' ')"

# --- users: a login name for UIDs 1001-1003 (the overlay's /etc is ours) ---
declare -A LOGIN=()
want_name=([1001]=alice [1002]=bob [1003]=carol)
for uid in 1001 1002 1003; do
	n=$(getent passwd $uid | cut -d: -f1)
	if [[ -z $n ]]; then
		n=${want_name[$uid]}
		getent passwd "$n" >/dev/null && n=fsvm$uid
		echo "$n:x:$uid:$uid:fsvm test user:/nonexistent:/usr/sbin/nologin" >>/etc/passwd
	fi
	LOGIN[$uid]=${n//[^A-Za-z0-9_-]/_} # the tenant name (conf/template.h)
done
A=${LOGIN[1001]} B=${LOGIN[1002]} C=${LOGIN[1003]}
t_note "users: 1001 $A, 1002 $B, 1003 $C"
ucg() { echo "user.slice/user-$1.slice"; }

# --- fairshared as the package installs it -----------------------------------
# The unit as packaging/meson.build generates it, with the build dir's
# binary installed as the package would (into /usr/local/sbin of the
# guest's overlay): the unit's ProtectHome=yes hides a build dir under /root
# or /home (a CI clone in /root failed with "Permission denied" at exec).
# A drop-in only adds the debug log, into a file the fsd_* helpers read (the
# format of stderr outside the journal), and a longer RestartSec: after a
# kill -9 the suite must see ExecStopPost's restored values before the
# restart writes the plan again, and 5 s was missed once in CI beside a busy
# host (wait_for's polls, a systemctl show each, slow under TCG).
RESTART_SEC=20
install -m 0755 "$FSD" /usr/local/sbin/fairshared
sed -e "s|@SBINDIR@|/usr/local/sbin|g" -e "s|@CONFIG@|$CONF|g" \
	"$FS_SRC/packaging/systemd/fairshared.service.in" >/etc/systemd/system/fairshared.service
mkdir -p /etc/systemd/system/fairshared.service.d /etc/fairshare /etc/sysusers.d /etc/tmpfiles.d
cat >/etc/systemd/system/fairshared.service.d/50-fsvm.conf <<EOF
[Service]
Environment=FAIRSHARED_LOG_LEVEL=debug
StandardOutput=append:$LOG
StandardError=append:$LOG
RestartSec=${RESTART_SEC}s
EOF
cp "$FS_SRC/packaging/systemd/fairshare.sysusers" /etc/sysusers.d/fairshare.conf
cp "$FS_SRC/packaging/systemd/fairshare.tmpfiles" /etc/tmpfiles.d/fairshare.conf
t_check "systemd-sysusers creates group fairshare" systemd-sysusers
t_check "systemd-tmpfiles creates $STATE" systemd-tmpfiles --create /etc/tmpfiles.d/fairshare.conf
# cpu = 1: the tenants' CPU. The users' and jobs' slices get CPU 1, the
# rest of the system (the suite, the daemon) CPU 0, so that measured shares
# are shares of a CPU only tenants use (as e2e-lib does with cpuset.cpus).
# sampler = cgroupfs: loading the eBPF samplers takes seconds under TCG and
# adds nothing here.
cat >"$CONF" <<EOF
[agent]
interval = ${E2E_INTERVAL}s
policy = psdsf
sampler = cgroupfs

[resources]
cpu = 1

[template.users]
match = user.slice/user-*.slice
weight = 1
weight.$A = 2

[template.jobs]
match = jobs.slice/job-*.scope
weight = 1
EOF
t_check "daemon-reload after the install" systemctl daemon-reload
t_check "user.slice and jobs.slice on CPU 1, system.slice on CPU 0" eval \
	'systemctl set-property --runtime user.slice AllowedCPUs=1 &&
	 systemctl set-property --runtime jobs.slice AllowedCPUs=1 &&
	 systemctl set-property --runtime system.slice AllowedCPUs=0'

# load_user UID SECONDS: one CPU-bound thread as UID in user-UID.slice, in a
# service delegated as a login's user@UID.service is (its controllers are
# then enabled down to the user's slice, as on a login node). --temp-path:
# stress-ng refuses to start in a directory it cannot write (the unit's /).
load_user() {
	systemd-run --quiet --uid="$1" --slice="user-$1.slice" --unit="fsvm-load-$1" \
		-p Delegate="pids memory cpu" \
		stress-ng --cpu 1 --cpu-method loop --timeout "${2}s" --quiet --temp-path /tmp
}

# --- originals: what systemd set before fairshared starts --------------------
t_section "two users' loads, and values an operator set with systemd"
# As long as the VM may run (run-suites' timeout): the users' slices must
# outlive the suite. With 400 s they ended at t = 450 s of a run beside a
# busy host, and every check from "fairctl release" on read no files.
t_check "load as $A in $(ucg 1001)" load_user 1001 1200
t_check "load as $B in $(ucg 1002)" load_user 1002 1200
t_check "$A's quota 80 %, $B's weight 50 and MemoryHigh 900M (systemctl set-property)" eval \
	'systemctl set-property --runtime user-1001.slice CPUQuota=80% &&
	 systemctl set-property --runtime user-1002.slice CPUWeight=50 MemoryHigh=900M'
declare -A orig=()
# snapshot ARRAY: every file of both users' slices into ARRAY[uid/file]
# (builtins only: fast enough to catch a state that lasts a second).
snapshot() {
	local -n into=$1
	local u f v
	for u in 1001 1002; do
		for f in "${FILES[@]}"; do
			v=""
			read -r v <"$CG_ROOT/$(ucg $u)/$f" 2>/dev/null
			into[$u/$f]=$v
		done
	done
}
snapshot orig
for k in 1001/cpu.max 1001/cpu.weight 1002/cpu.weight 1002/memory.high; do t_note "original $k = ${orig[$k]}"; done
t_check "the originals are systemd's (80000 100000, 50, 943718400)" eval \
	'[[ ${orig[1001/cpu.max]} == "80000 100000" && ${orig[1002/cpu.weight]} == 50 && ${orig[1002/memory.high]} == 943718400 ]]'

# restored: every file holds its original. all_restored LABEL asserts it.
restored() {
	local -A cur=()
	local k
	snapshot cur
	for k in "${!orig[@]}"; do [[ ${cur[$k]} == "${orig[$k]}" ]] || return 1; done
}
all_restored() {
	local -A cur=()
	local k bad=()
	snapshot cur
	for k in "${!orig[@]}"; do [[ ${cur[$k]} == "${orig[$k]}" ]] || bad+=("$k='${cur[$k]}' (was '${orig[$k]}')"); done
	if ((${#bad[@]} == 0)); then t_ok "$1: all ${#orig[@]} files hold their originals"; else t_fail "$1: ${bad[*]}"; fi
}

# --- systemd's unit properties as cgroup file values --------------------------
# usec TIMESPAN: a systemd timespan ("666.670ms", "1min 6s", "infinity") in
# microseconds ("max" for infinity).
usec() {
	awk -v s="$*" 'BEGIN {
		if (s == "infinity" || s == "") { print "max"; exit }
		m["us"] = 1; m["ms"] = 1e3; m["s"] = 1e6; m["min"] = 6e7; m["h"] = 3.6e9; m["d"] = 8.64e10
		t = 0; n = split(s, w, " ")
		for (i = 1; i <= n; i++) {
			if (!match(w[i], /^[0-9.]+/)) { print "bad"; exit }
			v = substr(w[i], 1, RLENGTH); u = substr(w[i], RLENGTH + 1)
			if (!(u in m)) { print "bad"; exit }
			t += v * m[u] }
		printf "%.0f\n", t }'
}

# sd_unit_files UNIT: what systemd writes for the unit's properties, as
# "cpu.max=Q P;cpu.weight=W;memory.high=B;memory.max=B;" (the order of
# FILES): CPUQuotaPerSecUSec over CPUQuotaPeriodUSec (default 100 ms),
# CPUWeight (not set: 100), MemoryHigh/MemoryMax (infinity: max).
sd_unit_files() {
	local k v q=max per=100000 w=100 mh=max mm=max
	while IFS='=' read -r k v; do
		case $k in
		CPUQuotaPerSecUSec) q=$(usec "$v") ;;
		CPUQuotaPeriodUSec) [[ $v == infinity ]] || per=$(usec "$v") ;;
		CPUWeight) [[ $v =~ ^[0-9]+$ ]] && w=$v ;;
		MemoryHigh) [[ $v == infinity ]] || mh=$v ;;
		MemoryMax) [[ $v == infinity ]] || mm=$v ;;
		esac
	done < <(systemctl show -p CPUQuotaPerSecUSec,CPUQuotaPeriodUSec,CPUWeight,MemoryHigh,MemoryMax "$1")
	[[ $q != max ]] && q=$((q * per / 1000000))
	echo "cpu.max=$q $per;cpu.weight=$w;memory.high=$mh;memory.max=$mm;"
}

# files_of UID: the user's slice's files in the same form.
files_of() {
	local f v out=""
	for f in "${FILES[@]}"; do
		v=""
		read -r v <"$CG_ROOT/$(ucg "$1")/$f"
		out+="$f=$v;"
	done
	echo "$out"
}

# sd_plan_match TENANT UNIT: (systemd backend) the unit's properties give
# the files of the tenant's plan of one of the last 3 periods. cpu.max
# compares as quota per second within 5 ms/s: systemd keeps CPUQuota in
# whole percent across a daemon-reload, so fairshare sets the nearest
# multiple of 10 ms/s (model/unitprop.h), and cpu.max is that times the
# period.
sd_plan_match() {
	local got want p k l f qg qw
	got=$(sd_unit_files "$2")
	p=$(fsd_period $D)
	for ((k = p; k > p - 3 && k > 0; k--)); do
		l=$(fsd_line $D "$1" "$k")
		want=""
		for f in "${FILES[@]}"; do want+="$f=$(kv "$l" "$f");"; done
		[[ ${got#*;} == "${want#*;}" ]] || continue
		qg=${got%%;*} qw=${want%%;*}
		qg=${qg#cpu.max=} qw=${qw#cpu.max=}
		if [[ $qg == "$qw" ]] || { [[ $qg != max* && $qw != max* ]] &&
			((${qg% *} * 1000000 / ${qg#* } - ${qw% *} * 1000000 / ${qw#* } <= 5000 &&
				${qw% *} * 1000000 / ${qw#* } - ${qg% *} * 1000000 / ${qg#* } <= 5000)); }; then
			echo "$2: $got (plan of period $k)"
			return 0
		fi
	done
	echo "$2: $got, but the plans of periods $((p - 2))..$p say e.g. $want"
	return 1
}

# tenant_backend TENANT: the backend fairshared reports for the tenant
# ("cgroupfs" when its status has no backend field: the writer of today).
tenant_backend() {
	"$FCTL" status --json 2>/dev/null | python3 -S -c '
import json, sys
s = json.load(sys.stdin)
for t in s.get("tenants", []):
    if t.get("name") == sys.argv[1]:
        print(t.get("backend") or "cgroupfs")
        break' "$1"
}

# --- the systemd backend: the units' own properties ---------------------------
# unit_props UNIT: the unit's cgroup properties as systemd keeps them (raw
# D-Bus values through busctl, not systemctl's rounded display), one
# "Name=value" per line.
SD_PROPS=(CPUQuotaPerSecUSec CPUQuotaPeriodUSec CPUWeight MemoryHigh MemoryMax MemoryLow IOWeight)
unit_props() {
	local obj iface p
	obj=$(busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
		org.freedesktop.systemd1.Manager GetUnit s "$1" | awk '{ gsub(/"/, "", $2); print $2 }') || return 1
	case $1 in *.slice) iface=Slice ;; *.scope) iface=Scope ;; *) iface=Service ;; esac
	for p in "${SD_PROPS[@]}"; do
		echo "$p=$(busctl get-property org.freedesktop.systemd1 "$obj" org.freedesktop.systemd1.$iface "$p" | awk '{ print $2 }')"
	done
}

# props_as_written TENANT UNIT: every value fairshare says it wrote
# (`fairctl explain --json`: for a systemd tenant each file's "written" is
# its properties, "CPUQuotaPerSecUSec=670000 CPUQuotaPeriodUSec=100000") is
# the unit's property now, exactly (infinity and unset: UINT64_MAX).
props_as_written() {
	local props w1 w2 try
	# what fairshare wrote, read before and after the unit's properties:
	# a plan that changed in between (a write of this very period) is read
	# again, not taken for a difference
	for try in 1 2 3; do
		w1=$(written_of "$1") || return 1
		props=$(unit_props "$2") || return 1
		w2=$(written_of "$1") || return 1
		[[ $w1 == "$w2" ]] && break
	done
	python3 -S -c '
import sys
have = dict(l.split("=", 1) for l in sys.argv[2].split("\n") if "=" in l)
bad, n = [], 0
for pair in sys.argv[3].split():
    name, want = pair.split("=", 1)
    if want in ("infinity", "unset"):
        want = str(2**64 - 1)
    if name not in have:
        continue
    n += 1
    if have[name] != want:
        bad.append("%s=%s (fairshare wrote %s)" % (name, have[name], want))
print("%s: %d properties as written%s" % (sys.argv[1], n, "; " + ", ".join(bad) if bad else ""))
sys.exit(1 if bad or n == 0 or sys.argv[4] != sys.argv[3] else 0)' "$2" "$props" "$w1" "$w2"
}
# written_of TENANT: the properties fairshare says it wrote (explain --json).
written_of() {
	local ex
	ex=$("$FCTL" explain --json "$1") || return 1
	python3 -S -c '
import json, sys
print(" ".join(f.get("written", "") for f in json.load(sys.stdin).get("files", [])))' <<<"$ex"
}

# quota_close GOT WANT TOL: two cpu.max values ("Q P" or "max P") give the
# same quota per second within TOL us/s.
quota_close() {
	local g=$1 w=$2 tol=$3
	[[ $g == "$w" ]] && return 0
	[[ $g == max* || $w == max* ]] && return 1
	local qg=$((${g% *} * 1000000 / ${g#* })) qw=$((${w% *} * 1000000 / ${w#* }))
	((qg - qw <= tol && qw - qg <= tol))
}

# tenant_backend_raw TENANT: the status's backend field as it is ("" none).
tenant_backend_raw() {
	"$FCTL" status --json 2>/dev/null | python3 -S -c '
import json, sys
for t in json.load(sys.stdin).get("tenants", []):
    if t.get("name") == sys.argv[1]:
        print(t.get("backend", ""))' "$1"
}

# plan_in_force UID TENANT: the slice's files hold the tenant's plan; with
# the systemd backend, the unit's properties are what fairshare wrote, they
# give the plan (within systemd's 1 % rounding of CPUQuota) and the files
# are what systemd makes of them.
plan_in_force() {
	if [[ ${BACKEND[$2]:-cgroupfs} != systemd ]]; then
		fsd_cgroup_files_match $D "$2" "$(ucg "$1")" "${FILES[@]}"
		return
	fi
	props_as_written "$2" "user-$1.slice" && sd_plan_match "$2" "user-$1.slice" &&
		[[ $(files_of "$1") == "$(sd_unit_files "user-$1.slice")" ]]
}
# backends_known: both users are in fairctl status, with their backends.
backends_known() {
	local t
	for t in "$A" "$B"; do
		BACKEND[$t]=$("$FCTL" status --json 2>/dev/null | python3 -S -c '
import json, sys
for t in json.load(sys.stdin).get("tenants", []):
    if t.get("name") == sys.argv[1]:
        print(t.get("backend") or "")' "$t")
		[[ -n ${BACKEND[$t]} ]] || return 1
	done
}
declare -A BACKEND=()
enforcing() { plan_in_force 1001 "$A" && plan_in_force 1002 "$B" && [[ $(cat "$CG_ROOT/$(ucg 1001)/cpu.max") != "${orig[1001/cpu.max]}" ]]; }

declare -A oprops=()
for u in 1001 1002; do oprops[$u]=$(unit_props "user-$u.slice" | tr '\n' ' '); done
t_note "properties of user-1001.slice: ${oprops[1001]}"
# props_restored: both units' properties are what they were before start.
props_restored() {
	local u now
	for u in 1001 1002; do
		now=$(unit_props "user-$u.slice" | tr '\n' ' ')
		[[ $now == "${oprops[$u]}" ]] || { echo "user-$u.slice: $now (was ${oprops[$u]})"; return 1; }
	done
}
# restored_all: the files and both units' properties are the originals.
restored_all() { restored && props_restored; }
t_check "before fairshared: the files are what the units' properties say" eval \
	'[[ $(files_of 1001) == "$(sd_unit_files user-1001.slice)" && $(files_of 1002) == "$(sd_unit_files user-1002.slice)" ]]'
t_note "user-1001.slice: $(sd_unit_files user-1001.slice)"
t_note "user-1002.slice: $(sd_unit_files user-1002.slice)"

# --- start --------------------------------------------------------------------
t_section "systemctl start fairshared"
t_check "fairshared.service starts (Type=notify: ready)" systemctl start fairshared.service
t_check "it is active" systemctl is-active --quiet fairshared.service
t_check "both users are tenants in fairctl status" wait_for 30 backends_known
backends_known # again here: t_check ran it in a subshell
t_note "backends: $A ${BACKEND[$A]:-?}, $B ${BACKEND[$B]:-?}"
t_check "both users' slices are written through systemd (status: backend systemd)" eval \
	'[[ ${BACKEND[$A]} == systemd && ${BACKEND[$B]} == systemd ]]'
t_note "$("$FCTL" status 2>&1 | grep -m1 -E '^ +backend ')"
t_check "their plan in force: the units' properties as written, the plan's, and the files" wait_for 30 enforcing
t_check "$A: systemctl show reports fairshare's CPUQuotaPerSecUSec" eval \
	'[[ $(systemctl show -P CPUQuotaPerSecUSec user-1001.slice) != 800ms ]] && props_as_written "$A" user-1001.slice'
t_note "systemctl show user-1001.slice: $(systemctl show -p CPUQuotaPerSecUSec,CPUQuotaPeriodUSec,CPUWeight,MemoryHigh,MemoryMax user-1001.slice | tr '\n' ' ')"
t_note "explain $A: $("$FCTL" explain "$A" 2>&1 | grep -A3 -E '^ +backend:' | tr -s ' ' | tr '\n' '|')"
st=$("$FCTL" status 2>&1)
t_check "fairctl status shows $A's template and login" grep -qE "^ +template +users, user $A\$" <<<"$st"
grep -A2 "^$A " <<<"$st" | sed 's/^/#   /'

# --- join and leave -------------------------------------------------------------
# joined TENANT CGROUP P0: the tenant is in the plan of the period that
# noticed its cgroup (the first template reload after period P0) and its
# cpu.max is written as planned.
joined() {
	local pj pt l
	l=$(fsd_line $D "$1")
	[[ -n $l && $(kv "$l" write) == 1 ]] || return 1
	# through systemd the quota is the plan's to systemd's 1 % (5 ms/s)
	quota_close "$(cat "$CG_ROOT/$2/cpu.max")" "$(kv "$l" cpu.max)" \
		"$([[ $(tenant_backend "$1") == systemd ]] && echo 5000 || echo 0)" || return 1
	pj=$(awk -v p0="$3" '/^fairshared: debug: period [0-9]+:/ { p = $4 + 0 }
		p >= p0 && /the cgroups the templates match changed/ { print p + 1; exit }' "$LOG")
	pt=$(awk -v t="fairshared: debug: tenant=$1 " '/^fairshared: debug: period [0-9]+:/ { p = $4 + 0 }
		index($0, t) == 1 { print p; exit }' "$LOG")
	echo "template reload in period ${pj:-?}, $1 first in the plan of period ${pt:-?}: $(kv "$l" cpu.max)"
	[[ -n $pj && $pj == "$pt" ]]
}
# noise CGROUP: the daemon's warning and error lines so far, less the drift
# corrections of other tenants (systemd rewrites the files of a new unit's
# siblings when it realizes the unit: that is drift, corrected and counted,
# not an error of the removal).
noise() {
	echo "$(grep -E 'warning|error' "$LOG" | grep -cvE '/(user|jobs)\.slice/[^ ]+ is .*changed by someone else') other," \
		"$(grep -F "$1/" "$LOG" | grep -c 'changed by someone else') drift of $1"
}

# join_leave TENANT CGROUP STOP_UNIT START_CMD...: START_CMD makes the
# cgroup; it must be a tenant within a period, and after `systemctl stop
# STOP_UNIT` removes the cgroup, be gone without a trace.
join_leave() {
	local t=$1 cg=$2 unit=$3 p0 nerr
	shift 3
	p0=$(fsd_period $D)
	"$@"
	t_check "$t: its cgroup $cg appears" wait_for 30 test -d "$CG_ROOT/$cg"
	t_check "$t is a tenant in the period that noticed it, cpu.max as planned" wait_for 20 joined "$t" "$cg" "$p0"
	assert_eq "$t: its backend (status)" "$(tenant_backend_raw "$t")" "$want_backend"
	t_note "$t: $(fsd_line $D "$t" | cut -c1-160)"
	nerr=$(noise "$cg")
	t_check "systemctl stop $unit" systemctl stop "$unit"
	t_check "$t: its cgroup is gone" wait_for 20 test ! -d "$CG_ROOT/$cg"
	[[ -d $CG_ROOT/$cg ]] && t_note "$unit: $(systemctl show -p ActiveState,LoadState "$unit" | tr '\n' ' ')$(ls "$CG_ROOT/$cg" 2>&1 | head -3 | tr '\n' ' ')"
	fsd_wait_periods $D 3 20
	t_check "$t is no tenant any more" eval "[[ -z \$(fsd_line $D $t) ]]"
	t_check "no saved original of $cg left" eval "! grep -qF '$cg' $STATE/writer.state"
	assert_eq "$t: no new warning or error after its removal" "$(noise "$cg")" "$nerr"
}
t_section "a new user slice joins and leaves"
want_backend=systemd
join_leave "$C" "$(ucg 1003)" user-1003.slice load_user 1003 60
t_section "a scope joins and leaves"
start_scope() {
	systemd-run --quiet --scope --slice=jobs.slice --unit=job-1 -p Delegate=yes \
		stress-ng --cpu 1 --cpu-method loop --timeout 60s --quiet &
}
# Delegate=yes: the scope's subtree is its own, fairshare writes cgroupfs
want_backend=cgroupfs
join_leave job-1 jobs.slice/job-1.scope job-1.scope start_scope
wait

# --- fairness -----------------------------------------------------------------
t_section "CPU shares of two users follow the template weights"
fsd_wait_periods $D 6 30
# The median of three 5 s windows, not one 10 s window: the two limits add
# up to CPU 1 exactly, so a burst of anything else on that CPU (a kworker,
# the emulator's own stall under TCG) is taken from whichever load it
# preempts. One such burst put a single window at 2.106 (bob 0.314 of his
# 0.333) while the plan was exact; a lasting unfairness moves the median.
ratios=()
for w in 1 2 3; do
	read -r -d '' ca cb < <(cg_cpu_shares 5 "$(ucg 1001)" "$(ucg 1002)")
	record "systemd_a_cores_$w" "$ca"
	record "systemd_b_cores_$w" "$cb"
	ratios+=("$(calc "$ca / $cb")")
done
la=$(fsd_line $D "$A") lb=$(fsd_line $D "$B")
assert_near "plan: $A's cpu limit is 2/3 core" "$(fsd_limit "$la" cpu)" 0.667 0.05
assert_near "plan: $B's cpu limit is 1/3 core" "$(fsd_limit "$lb" cpu)" 0.333 0.05
t_note "measured cpu ratios $A:$B in three 5 s windows: ${ratios[*]}"
ratio=$(printf '%s\n' "${ratios[@]}" | sort -g | sed -n 2p)
record systemd_ratio_a_b "$ratio"
assert_near "measured cpu ratio $A:$B is 2:1 (weight.$A = 2), median of 3 windows" "$ratio" 2 0.05

# --- drift ----------------------------------------------------------------------
# drift_after P0: the first period after P0 whose status line counts a
# drifted file (the per-tenant drift log line is rate-limited to one a
# minute, so it cannot date a second drift of the same tenant; nothing else
# changes the users' files meanwhile).
drift_after() {
	awk -v p0="$1" '/^fairshared: debug: period [0-9]+:/ && $4 + 0 > p0 && / drifted [1-9]/ { print $4 + 0; exit }' "$LOG"
}
drifted_total() { awk '/^fairshared: debug: period [0-9]+:/ { n += $NF } END { print n + 0 }' "$LOG"; }

t_section "systemctl daemon-reload"
d0=$(drifted_total)
p0=$(fsd_period $D)
t_check "daemon-reload" systemctl daemon-reload
fsd_wait_periods $D 2 20
t_check "$A: the plan in force 2 periods after daemon-reload" plan_in_force 1001 "$A"
t_check "$B: the plan in force 2 periods after daemon-reload" plan_in_force 1002 "$B"
t_note "files systemd rewrote on daemon-reload (corrected): $(($(drifted_total) - d0)), first in period $(drift_after "$p0") (reload after period $p0)"
assert_eq "daemon-reload: nothing to correct (systemd reapplied fairshare's own properties)" "$(($(drifted_total) - d0))" 0

t_section "systemctl set-property by hand"
ours=$(cat "$CG_ROOT/$(ucg 1001)/cpu.max")
p0=$(fsd_period $D)
t_check "systemctl set-property --runtime user-1001.slice CPUQuota=90%" \
	systemctl set-property --runtime user-1001.slice CPUQuota=90%
# Counted from when set-property returned: beside a busy host the call
# itself took a period or more (corrected in period p0 + 3 once).
p1=$(fsd_period $D)
if [[ ${BACKEND[$A]} != systemd ]]; then
	# (through systemd fairshare sets the property itself, within a period)
	t_check "systemd keeps it: the unit's properties say cpu.max 90000 100000" eval \
		'[[ $(sd_unit_files user-1001.slice) == "cpu.max=90000 100000;"* ]]'
fi
corrected() { [[ $(cat "$CG_ROOT/$(ucg 1001)/cpu.max") != "$1" ]] && plan_in_force 1001 "$A"; }
t_check "$A's cpu.max is the plan's again (was $ours)" wait_for 20 corrected "90000 100000"
pc=$(drift_after "$p0")
if [[ -n $pc ]] && ((pc - p1 <= 2)); then
	t_ok "corrected in period $pc, within 2 periods of set-property (it returned after period $p1, began after $p0)"
else
	t_fail "corrected in period '${pc:-never}', set-property returned after period $p1 (began after $p0)"
fi
record systemd_drift_correction_periods "$((${pc:-999} - p1))"
record systemd_set_property_periods "$((p1 - p0))"
t_note "drift line: $(grep -m1 -E 'user-1001.slice/cpu.max is "(90000 100000|CPUQuotaPerSecUSec=900000 [^"]*)", changed by someone else' "$LOG")"
t_check "status counts corrections of $A" eval \
	'"$FCTL" status --json | grep -qE "\"drift_corrected_total\": *[1-9]"'
# Back to the original quota, so that systemd's properties are the originals
# again (systemd writes 80000 once more; corrected like any drift).
t_check "set-property back to CPUQuota=80%" systemctl set-property --runtime user-1001.slice CPUQuota=80%
t_check "$A's plan in force again" wait_for 20 corrected "80000 100000"

# --- fairctl release, reload -------------------------------------------------------
# (root's control socket: the originals back, nothing written until reload)
t_section "fairctl release, then fairctl reload"
t_check "fairctl release" "$FCTL" release
t_check "released: the originals (files and the units' properties)" wait_for 10 restored_all
all_restored "after fairctl release"
fsd_wait_periods $D 3 20
t_check "released: still the originals 3 periods later (not enforcing)" restored_all
t_check "fairctl reload" "$FCTL" reload
t_check "enforcing again after reload" wait_for 30 enforcing

# --- stop, kill -9 ---------------------------------------------------------------
t_section "systemctl stop fairshared"
t_check "systemctl stop" systemctl stop fairshared.service
assert_eq "stopped cleanly (Result)" "$(systemctl show -P Result fairshared.service)" success
t_check "log says restored" grep -q "restored the original cgroup values" "$LOG"
all_restored "after stop"
t_check "after stop: the units' properties are the originals" props_restored
t_check "the files are what the units' properties say again" eval \
	'[[ $(files_of 1001) == "$(sd_unit_files user-1001.slice)" && $(files_of 1002) == "$(sd_unit_files user-1002.slice)" ]]'

t_section "kill -9, then the unit's ExecStopPost="
t_check "fairshared.service starts again" systemctl start fairshared.service
t_check "enforcing again" wait_for 30 enforcing
fsd_wait_periods $D 2 20
pid=$(systemctl show -P MainPID fairshared.service)
nrel=$(grep -c "release" "$LOG")
t_check "kill -9 the main process ($pid)" kill -9 "$pid"
# ExecStopPost runs `fairshared --release`; Restart=on-failure starts the
# daemon again RESTART_SEC later (the drop-in's RestartSec), which writes
# its values again.
# (files and the units' properties, before Restart= writes them again)
t_check "ExecStopPost restored the originals (files and the units' properties)" wait_for 30 restored_all
all_restored "after kill -9 and ExecStopPost"
t_note "release: $(grep "release" "$LOG" | tail -n +$((nrel + 1)) | head -3 | tr '\n' '|')"
t_check "Restart=on-failure: fairshared enforces again" wait_for $((RESTART_SEC + 60)) enforcing
assert_eq "one automatic restart (NRestarts)" "$(systemctl show -P NRestarts fairshared.service)" 1
t_check "systemctl stop" systemctl stop fairshared.service
all_restored "after the restarted daemon's stop"
t_check "after the restarted daemon's stop: the units' properties are the originals" props_restored

record systemd_drift_files_total "$(drifted_total)"
((T_FAIL > 0)) && e2e_dump $D 30
t_done
