#!/bin/bash
# Builds the fairshare .deb (tools/build-deb), installs it on this machine,
# checks what an operator gets, then purges it and checks nothing is left.
#
#   tests/packaging/test-deb.sh [--deb FILE] [--out DIR]
#     --deb FILE  test this package instead of building one
#     --out DIR   where tools/build-deb puts the package (default: build-deb/)
#
# Needs root (dpkg -i / --purge), dpkg-dev, debhelper, man-db, groff-base,
# systemd (systemd-analyze). Exits 77 (skipped) without root or without the
# build tools, and refuses to run when fairshare is already installed, so it
# never replaces or removes an operator's installation.
# Ends with one line "N passed, N failed"; exit status 0 when none failed.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$src/build-deb
deb=

while [ $# -gt 0 ]; do
	case $1 in
	--deb) deb=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	*) echo "test-deb: unknown argument '$1'" >&2; exit 2 ;;
	esac
done

skip() {
	echo "test-deb: skipped: $*"
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root for dpkg -i"
for t in dpkg-buildpackage dh systemd-analyze man groff; do
	command -v "$t" >/dev/null || skip "$t not installed"
done
case $(dpkg-query -W -f='${db:Status-Status}' fairshare 2>/dev/null) in
'' | not-installed) ;;
*)
	echo "test-deb: the fairshare package is already on this machine; not touching it" >&2
	echo "0 passed, 1 failed"
	exit 1
	;;
esac

passed=0 failed=0
ok() {
	echo "PASS: $*"
	passed=$((passed + 1))
}
ko() {
	echo "FAIL: $*"
	failed=$((failed + 1))
}
check() { # description, command...
	local what=$1
	shift
	if "$@"; then ok "$what"; else ko "$what"; fi
}
quiet() { # command...: runs it, true when it succeeds and prints nothing at all
	local o
	o=$("$@" 2>&1) && [ -z "$o" ] && return 0
	printf '%s\n' "$o" | sed 's/^/    /'
	return 1
}

tmp=$(mktemp -d /tmp/fairshare-test-deb.XXXXXX)
installed=false
group_existed=false
run_before=
getent group fairshare >/dev/null && group_existed=true
# Another fairshared (a developer's test run) may be using /run/fairshare:
# the package's tmpfiles entry re-owns it, so put its owner and mode back.
[ -d /run/fairshare ] && run_before=$(stat -c '%a %u:%g' /run/fairshare)
cleanup() {
	if $installed; then
		dpkg --purge fairshare >/dev/null 2>&1
	fi
	# The package leaves the group behind on purge, as Debian packages do;
	# the test removes it when the test created it, to leave the machine as
	# it found it.
	if ! $group_existed && getent group fairshare >/dev/null; then
		groupdel fairshare
	fi
	if [ -n "$run_before" ] && [ -d /run/fairshare ]; then
		chown "${run_before#* }" /run/fairshare
		chmod "${run_before%% *}" /run/fairshare
	elif [ -z "$run_before" ]; then
		rmdir /run/fairshare 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# Everything the package may touch, to compare before and after.
snapshot() {
	{
		find /etc/fairshare /usr/share/doc/fairshare \
			/etc/systemd/system /lib/systemd/system/fairshared.service \
			/var/lib/systemd/deb-systemd-helper-enabled \
			/var/lib/systemd/deb-systemd-helper-masked 2>/dev/null
		ls -d /usr/sbin/fair* /usr/sbin/fs-bpfstat /usr/lib/tmpfiles.d/fairshare* \
			/usr/lib/sysusers.d/fairshare* /usr/share/man/man5/fairshare* \
			/usr/share/man/man8/fair* 2>/dev/null
	} | sort
}

# --- build -----------------------------------------------------------------
if [ -z "$deb" ]; then
	if "$src/tools/build-deb" --out "$out" >"$tmp/build.log" 2>&1; then
		ok "tools/build-deb builds the package"
	else
		tail -n 40 "$tmp/build.log" | sed 's/^/    /'
		ko "tools/build-deb builds the package"
	fi
	ver=$(dpkg-parsechangelog -l "$src/packaging/debian/changelog" -S Version)
	deb=$out/fairshare_${ver}_$(dpkg --print-architecture).deb
fi
if [ ! -f "$deb" ]; then
	ko "package file $deb exists"
	echo "$passed passed, $failed failed"
	exit 1
fi
pkg_ver=$(dpkg-deb -f "$deb" Version)

# --- install ---------------------------------------------------------------
snapshot >"$tmp/before"
if dpkg -i "$deb" >"$tmp/install.log" 2>&1; then
	installed=true
	ok "dpkg -i $(basename "$deb")"
else
	sed 's/^/    /' "$tmp/install.log"
	ko "dpkg -i $(basename "$deb")"
	dpkg-query -W fairshare >/dev/null 2>&1 && installed=true
	echo "$passed passed, $failed failed"
	exit 1
fi

for f in /usr/sbin/fairshared /usr/bin/fairctl; do
	check "$f is installed and executable" test -x "$f"
done
# Minimal images (debian:12-slim) tell dpkg not to unpack man pages and docs
# (path-exclude in /etc/dpkg/dpkg.cfg.d): there, such files need only be in the
# package, and the man page checks read them from the .deb itself.
excludes=$(sed -n 's/^path-exclude[= ]//p' /etc/dpkg/dpkg.cfg /etc/dpkg/dpkg.cfg.d/* 2>/dev/null)
excluded() {
	local g
	while IFS= read -r g; do
		# shellcheck disable=SC2053 # $g is a glob on purpose
		[ -n "$g" ] && [[ $1 == $g ]] && return 0
	done <<<"$excludes"
	return 1
}
installed_ok() {
	if excluded "$1"; then
		dpkg -L fairshare | grep -qx "$1"
	else
		test -f "$1"
	fi
}
for f in /lib/systemd/system/fairshared.service /usr/lib/tmpfiles.d/fairshare.conf \
	/usr/lib/sysusers.d/fairshare.conf /usr/share/man/man8/fairshared.8.gz \
	/usr/share/man/man1/fairctl.1.gz /usr/share/man/man5/fairshare.conf.5.gz \
	/usr/share/doc/fairshare/examples/build-farm.ini; do
	check "$f is installed" installed_ok "$f"
done
dpkg-deb -x "$deb" "$tmp/deb"
check "/etc/fairshare/fairshare.conf is a conffile" \
	grep -qx /etc/fairshare/fairshare.conf /var/lib/dpkg/info/fairshare.conffiles
check "/etc/fairshare/fairshare.conf is conf/fairshare.conf.example" \
	cmp -s /etc/fairshare/fairshare.conf "$src/conf/fairshare.conf.example"
group_ok() { getent group fairshare >/dev/null; }
check "postinst created the fairshare group" group_ok
check "postinst created /run/fairshare (0750 root:fairshare)" \
	test "$(stat -c '%a %U %G' /run/fairshare 2>/dev/null)" = "750 root fairshare"
check "fairshared.service is installed but not enabled" \
	test ! -e /etc/systemd/system/multi-user.target.wants/fairshared.service

# --- the programs ------------------------------------------------------------
usage_ok() { # command...: exit 0 and a Usage: line on stdout
	local o
	o=$("$@" 2>&1) || return 1
	grep -q '^Usage: ' <<<"$o"
}
check "fairshared --help" usage_ok /usr/sbin/fairshared --help
check "fairctl --help" usage_ok /usr/bin/fairctl --help
check "fairshared --version is the package's ($pkg_ver)" \
	test "$(/usr/sbin/fairshared --version)" = "fairshared $pkg_ver"
solve_ok() { /usr/bin/fairctl solve "$1" >"$tmp/solve.out" 2>&1 && grep -q ci.slice "$tmp/solve.out"; }
check "fairctl solve the packaged example scenario" \
	solve_ok "$tmp/deb/usr/share/doc/fairshare/examples/build-farm.ini"

# The shipped config has no tenant: refused with EX_CONFIG (78), the status
# the unit's RestartPreventExitStatus= names, with the file name in the message.
refused_ok() {
	local rc=0
	/usr/sbin/fairshared --config /etc/fairshare/fairshare.conf --dry-run --once \
		>"$tmp/refused.out" 2>&1 || rc=$?
	[ "$rc" -eq 78 ] && grep -q '/etc/fairshare/fairshare.conf: no \[tenant' "$tmp/refused.out"
}
check "the shipped config alone is refused with exit status 78" refused_ok
# ... and with one tenant added it is accepted: every default in it is valid.
# (state_dir and socket point into $tmp so that a running daemon is left alone.)
accepted_ok() {
	local rc=0
	sed -e "s|^#state_dir = .*|state_dir = $tmp/state|" \
		-e "s|^#socket = .*|socket = $tmp/state/control.sock|" \
		-e "s|^#enforce = .*|enforce = off|" /etc/fairshare/fairshare.conf >"$tmp/one.conf"
	printf '\n[tenant.t]\ncgroup = fairshare-test-deb.slice\n' >>"$tmp/one.conf"
	timeout 60 /usr/sbin/fairshared --config "$tmp/one.conf" --dry-run --once \
		>"$tmp/accepted.out" 2>&1 || rc=$?
	[ "$rc" -ne 78 ] || { sed 's/^/    /' "$tmp/accepted.out"; return 1; }
}
check "the shipped config plus one tenant is accepted" accepted_ok

# Every key the parser knows is in the shipped file (commented out, at its
# default) and in fairshare.conf(5).
keys_ok() {
	local k re missing=0 keys
	keys=$(sed -n -e 's/.*{"\([a-z_]*\)", offsetof(struct raw_conf.*/\1/p' \
		-e 's/.*strcmp(name, "\([a-z_]*\)") == 0.*/\1/p' \
		-e 's/.*strncmp(name, "\(io\.\)", 3).*/\1/p' "$src/conf/agent_conf.c" | sort -u)
	[ -n "$keys" ] || { echo "    no keys found in conf/agent_conf.c"; return 1; }
	for k in $keys; do
		re=${k//./\\.}
		if ! grep -q "^#${re}[A-Za-z0-9_]* =" /etc/fairshare/fairshare.conf; then
			echo "    key '$k' missing from /etc/fairshare/fairshare.conf"
			missing=1
		fi
		if ! zcat "$tmp/deb/usr/share/man/man5/fairshare.conf.5.gz" | grep -q "^\.BI\? ${re}\( \|$\)"; then
			echo "    key '$k' missing from fairshare.conf(5)"
			missing=1
		fi
	done
	[ "$missing" -eq 0 ]
}
check "every config key is in the conffile and in fairshare.conf(5)" keys_ok

# --- the unit ----------------------------------------------------------------
# verify also runs man(1) on the unit's Documentation= pages, unless they
# were not unpacked (see path-exclude above).
verify_man=--man=yes
excluded /usr/share/man/man8/fairshared.8.gz && verify_man=--man=no
check "systemd-analyze verify $verify_man fairshared.service" \
	quiet systemd-analyze verify "$verify_man" /lib/systemd/system/fairshared.service
security_ok() {
	local level
	systemd-analyze security --offline=true /lib/systemd/system/fairshared.service \
		>"$tmp/security.out" 2>&1
	level=$(sed -n 's/.*Overall exposure level for fairshared.service: \([0-9.]*\).*/\1/p' \
		"$tmp/security.out")
	echo "    systemd-analyze security: exposure level ${level:-?} (0 = locked down, 10 = none)"
	[ -n "$level" ] && awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }'
}
check "systemd-analyze security: exposure level <= 2.0" security_ok

# --- man pages -----------------------------------------------------------------
man_ok() { # man-db's own check, at a terminal's width
	local o
	o=$(MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null)
	[ -z "$o" ] || { printf '%s\n' "$o" | sed 's/^/    /'; return 1; }
}
groff_ok() { # every groff warning
	local o
	o=$(zcat "$1" | groff -ww -z -man 2>&1)
	[ -z "$o" ] || { printf '%s\n' "$o" | sed 's/^/    /'; return 1; }
}
for page in "$tmp"/deb/usr/share/man/man8/fairshared.8.gz \
	"$tmp"/deb/usr/share/man/man1/fairctl.1.gz "$tmp"/deb/usr/share/man/man5/fairshare.conf.5.gz; do
	name=$(basename "$page" .gz)
	check "man --warnings -l $name: no warnings" man_ok "$page"
	check "groff -ww -man $name: no warnings" groff_ok "$page"
done
if ! excluded /usr/share/man/man5/fairshare.conf.5.gz; then
	check "man -w finds fairshare.conf(5) by name" \
		test "$(man -w 5 fairshare.conf 2>/dev/null)" = /usr/share/man/man5/fairshare.conf.5.gz
fi

# --- purge ---------------------------------------------------------------------
if dpkg --purge fairshare >"$tmp/purge.log" 2>&1; then
	installed=false
	ok "dpkg --purge fairshare"
else
	sed 's/^/    /' "$tmp/purge.log"
	ko "dpkg --purge fairshare"
fi
snapshot >"$tmp/after"
if diff -u "$tmp/before" "$tmp/after" >"$tmp/diff"; then
	ok "nothing left behind after purge"
else
	sed 's/^/    /' "$tmp/diff"
	ko "nothing left behind after purge"
fi
if [ -z "$run_before" ]; then
	check "purge removed /run/fairshare" test ! -e /run/fairshare
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
