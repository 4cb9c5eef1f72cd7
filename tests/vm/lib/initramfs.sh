# shellcheck shell=bash
# The guest's initramfs: static busybox, the modules needed to reach a 9p root (from the guest
# kernel's own /lib/modules), and initramfs-init.sh as /init. Nothing in it depends on the run,
# so it is built once per kernel and cached.

# vm_initramfs KVER CACHE LIBDIR: prints the path of the gzip'd cpio.
vm_initramfs() {
	local kver=$1 cache=$2 lib=$3 key out stage ko
	[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
		{ vm_note "need a static /bin/busybox (Debian package busybox-static)"; return 1; }
	key=$({ cat "$lib/initramfs-init.sh"; stat -c '%s %Y' /bin/busybox "/lib/modules/$kver/modules.dep"; } |
		sha256sum | cut -c1-16)
	out=$cache/initramfs-$key.cpio.gz
	if [ -s "$out" ]; then
		echo "$out"
		return 0
	fi
	mkdir -p "$cache" || return 1
	stage=$(mktemp -d) || return 1
	mkdir -p "$stage/bin" "$stage/mods"
	cp /bin/busybox "$stage/bin/busybox"
	cp "$lib/initramfs-init.sh" "$stage/init"
	chmod 755 "$stage/init"
	# modprobe --show-depends lists dependencies first: that is the insmod order.
	if ! (for m in virtio_pci 9pnet_virtio 9p overlay; do
		modprobe -S "$kver" --show-depends "$m" || exit 1
	done) >"$stage/deps"; then
		vm_note "kernel $kver lacks a module needed to boot (virtio_pci, 9p, overlay)"
		rm -rf "$stage"
		return 1
	fi
	awk '$1 == "insmod" && !seen[$2]++ { print $2 }' "$stage/deps" | while read -r ko; do
		case $ko in
		*.ko.xz) xz -dc "$ko" >"$stage/mods/$(basename "$ko" .xz)" ;;
		*.ko.zst) zstd -qdc "$ko" >"$stage/mods/$(basename "$ko" .zst)" ;;
		*.ko.gz) gzip -dc "$ko" >"$stage/mods/$(basename "$ko" .gz)" ;;
		*) cp "$ko" "$stage/mods/" ;;
		esac
		basename "${ko%.ko*}.ko" >>"$stage/modorder"
	done
	rm -f "$stage/deps"
	(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$out.$$" &&
		mv -f "$out.$$" "$out" &&
		find "$cache" -maxdepth 1 -name 'initramfs-*.cpio.gz' ! -name "${out##*/}" -delete # older versions
	rm -rf "$stage" "$out.$$"
	[ -s "$out" ] || { vm_note "building the initramfs failed"; return 1; }
	echo "$out"
}
