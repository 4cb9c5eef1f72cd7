# shellcheck shell=bash
# soft-iWARP module: Debian's kernels are built with "# CONFIG_RDMA_SIW is not set", so siw.ko is
# built out of tree from Debian's linux-source-X.Y tarball against linux-headers-KVER, once per
# kernel, and cached.

# vm_siw_module KVER CACHE: prints the siw.ko to insmod, or "" when the kernel ships siw itself.
# Returns 1 (with a message) when it cannot be had.
vm_siw_module() {
	local kver=$1 cache=$2
	if modinfo -k "$kver" siw >/dev/null 2>&1; then
		echo ""
		return 0
	fi
	local series src headers stamp
	series=$(echo "$kver" | cut -d. -f1-2)
	src=/usr/src/linux-source-$series.tar.xz
	headers=/lib/modules/$kver/build
	[ -r "$src" ] || { vm_note "siw: kernel $kver has no siw module; building it needs linux-source-$series (run scripts/setup.sh)"; return 1; }
	[ -r "$headers/Module.symvers" ] || { vm_note "siw: building siw.ko needs linux-headers-$kver (run scripts/setup.sh)"; return 1; }
	# Rebuild when the headers (symbol versions) or the source change.
	stamp="$(stat -c '%s %Y' "$headers/Module.symvers" "$src" | tr '\n' ' ')"
	mkdir -p "$cache" || { vm_note "siw: cannot create cache dir $cache"; return 1; }
	(
		# One build at a time per kernel: a second run waits and then finds the module.
		exec 9>"$cache/siw.lock"
		flock 9
		if [ -s "$cache/siw.ko" ] && [ "$(cat "$cache/siw.stamp" 2>/dev/null)" = "$stamp" ]; then
			exit 0
		fi
		vm_siw_build "$kver" "$series" "$src" "$cache" && echo "$stamp" >"$cache/siw.stamp"
	) || return 1
	echo "$cache/siw.ko"
}

# vm_siw_build KVER SERIES SRC CACHE: extracts drivers/infiniband/sw/siw, builds, installs siw.ko.
vm_siw_build() {
	local kver=$1 series=$2 src=$3 cache=$4 work dir v_src v_img rc=0
	v_src=$(dpkg-query -W -f '${Version}' "linux-source-$series" 2>/dev/null || true)
	v_img=$(dpkg-query -W -f '${Version}' "linux-image-$kver" 2>/dev/null ||
		dpkg-query -W -f '${Version}' "linux-image-$kver-unsigned" 2>/dev/null || true)
	[ "$v_src" = "$v_img" ] ||
		vm_note "siw: warning: linux-source-$series is ${v_src:-unknown} but linux-image-$kver is ${v_img:-unknown}"
	vm_note "siw: building siw.ko for $kver from $src (once; cached in $cache)"
	work=$(mktemp -d) || return 1
	dir=$work/linux-source-$series/drivers/infiniband/sw/siw
	{
		tar -xJf "$src" -C "$work" "linux-source-$series/drivers/infiniband/sw/siw" &&
			make -s -C "/lib/modules/$kver/build" M="$dir" CONFIG_RDMA_SIW=m modules &&
			strip --strip-debug -o "$cache/siw.ko.$$" "$dir/siw.ko" &&
			mv -f "$cache/siw.ko.$$" "$cache/siw.ko"
	} >&2 || rc=1
	rm -rf "$work" "$cache/siw.ko.$$"
	[ $rc = 0 ] || vm_note "siw: building siw.ko failed"
	return $rc
}
