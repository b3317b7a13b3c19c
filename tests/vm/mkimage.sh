#!/bin/bash
# Build (or reuse) the VM boot artifacts for one kernel and print the cache dir.
#
#   mkimage.sh CACHE_ROOT [KVER]
#
# CACHE_ROOT/KVER/ then holds:
#   vmlinux         uncompressed kernel with a PVH entry (booted directly, ~2.5 s
#                   faster under TCG than letting the bzImage decompress itself),
#                   absent if the kernel has no PVH note (then bzImage is booted)
#   kernel          symlink to what qemu -kernel should boot
#   initramfs.cpio  busybox-static + the virtio/9p modules + init.sh as /init
#                   (+ overlay, loaded only for suites that boot systemd)
#
# Artifacts are rebuilt only when missing or older than their inputs, so a warm
# run costs nothing and a cold one a couple of seconds.
set -euo pipefail

die() {
	echo "mkimage: $*" >&2
	exit 1
}

cache_root=${1:?usage: mkimage.sh CACHE_ROOT [KVER]}
kver=${2:-}
here=$(cd "$(dirname "$0")" && pwd)

# Newest kernel that has both an image and its modules.
if [[ -z $kver ]]; then
	for img in $(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -rV); do
		v=${img#/boot/vmlinuz-}
		if [[ -d /lib/modules/$v/kernel ]]; then
			kver=$v
			break
		fi
	done
	[[ -n $kver ]] || die "no /boot/vmlinuz-* with matching /lib/modules"
fi
bzimage=/boot/vmlinuz-$kver
moddir=/lib/modules/$kver
[[ -r $bzimage ]] || die "$bzimage not readable"
[[ -f $moddir/modules.dep ]] || die "$moddir/modules.dep missing"
busybox=$(command -v busybox) || die "busybox not found"
file -L "$busybox" | grep -q 'statically linked' ||
	die "$busybox is not static (install busybox-static)"

out=$cache_root/$kver
mkdir -p "$out"
# Concurrent cold runs (test-harness boots two VMs at once) would otherwise
# both rebuild into the same files and one would boot a half-written image.
exec 9>"$out/.lock"
flock 9

# newer_than TARGET INPUT...: true if TARGET exists and is newer than all inputs.
newer_than() {
	local t=$1 f
	shift
	[[ -e $t ]] || return 1
	for f in "$@"; do
		[[ $t -nt $f ]] || return 1
	done
}

# --- kernel: extract the ELF payload the way scripts/extract-vmlinux does ---
extract_vmlinux() {
	local tmp=$out/vmlinux.tmp magic tool off
	for magic in 'xz:\xfd7zXZ\x00' 'zstd:\x28\xb5\x2f\xfd' 'gzip:\x1f\x8b\x08'; do
		tool=${magic%%:*}
		command -v "$tool" >/dev/null || continue
		for off in $(LC_ALL=C grep -obUaP "${magic#*:}" "$bzimage" | cut -d: -f1); do
			# Trailing bytes after the stream make the decompressor
			# complain; the ELF check below is what decides.
			tail -c +$((off + 1)) "$bzimage" | "$tool" -dc >"$tmp" 2>/dev/null || true
			if [[ $(head -c 4 "$tmp" 2>/dev/null | od -An -c | tr -d ' ') == '177ELF' ]]; then
				mv "$tmp" "$out/vmlinux"
				return 0
			fi
		done
	done
	rm -f "$tmp"
	return 1
}

if ! newer_than "$out/kernel" "$bzimage"; then
	rm -f "$out/kernel" "$out/vmlinux"
	# XEN_ELFNOTE_PHYS32_ENTRY (0x12) is the PVH entry qemu needs to boot an ELF.
	if extract_vmlinux && readelf -nW "$out/vmlinux" | grep -q 'note type: (0x00000012)'; then
		ln -s vmlinux "$out/kernel"
	else
		echo "mkimage: no PVH-bootable vmlinux in $bzimage, booting bzImage" >&2
		rm -f "$out/vmlinux"
		ln -s "$bzimage" "$out/kernel"
	fi
fi

# --- initramfs ---
# Modules and their dependencies, in load order (modules.dep lists each
# module's transitive deps so that loading them last-to-first works).
# module_order MODULE...: them and their dependencies, in load order.
module_order() {
	awk -v want="$*" '
		function base(p) { sub(/.*\//, "", p); sub(/\.ko.*$/, "", p); return p }
		BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) wi[w[i]] = i }
		{ m = base($1); sub(/:$/, "", $1)
		  if (m in wi) { line[m] = $0 } }
		END {
			for (i = 1; i <= n; i++) {
				if (!(w[i] in line)) { print "MISSING " w[i]; continue }
				k = split(line[w[i]], f, " ")
				for (j = k; j >= 2; j--) if (!(f[j] in seen)) { seen[f[j]] = 1; print f[j] }
				p = f[1]; sub(/:$/, "", p)
				if (!(p in seen)) { seen[p] = 1; print p }
			}
		}' "$moddir/modules.dep"
}

# add_modules ORDER_FILE MODULE_PATH...: copy each module (relative to
# $moddir) to the initramfs' /modules and list it in ORDER_FILE.
add_modules() {
	local order=$1 m
	shift
	: >"$order"
	for m in "$@"; do
		# Uncompressed .ko: busybox insmod cannot read compressed ones.
		case $m in
		*.ko) cp "$moddir/$m" "$root/modules/" ;;
		*.ko.xz) xz -dc "$moddir/$m" >"$root/modules/$(basename "${m%.xz}")" ;;
		*.ko.zst) zstd -qdc "$moddir/$m" >"$root/modules/$(basename "${m%.zst}")" ;;
		*.ko.gz) gzip -dc "$moddir/$m" >"$root/modules/$(basename "${m%.gz}")" ;;
		*) die "unknown module format $m" ;;
		esac
		m=$(basename "$m")
		echo "${m%%.ko*}.ko" >>"$order"
	done
}

initrd=$out/initramfs.cpio
if ! newer_than "$initrd" "$here/init.sh" "$0" "$moddir/modules.dep" "$busybox"; then
	mods=$(module_order virtio_pci virtio_blk 9pnet_virtio 9p)
	# Loaded only by the systemd boot (its root is an overlay on the 9p root).
	mods_sd=$(module_order overlay)
	grep -q '^MISSING' <<<"$mods"$'\n'"$mods_sd" &&
		die "modules not found in $moddir: $(grep MISSING <<<"$mods"$'\n'"$mods_sd")"
	root=$(mktemp -d "$out/root.XXXXXX")
	trap 'rm -rf "$root"' EXIT
	mkdir -p "$root"/{bin,dev,proc,sys,host,modules,tmp}
	cp "$busybox" "$root/bin/busybox"
	for a in $("$busybox" --list); do
		[[ $a == busybox ]] || ln -s busybox "$root/bin/$a"
	done
	add_modules "$root/modules/order" $mods
	add_modules "$root/modules/order.systemd" $mods_sd
	install -m 0755 "$here/init.sh" "$root/init"
	# Uncompressed: the kernel unpacks it faster than it gunzips under TCG,
	# and it only lives in the cache.
	(cd "$root" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc --quiet) >"$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
	rm -rf "$root"
	trap - EXIT
fi

echo "$out"
