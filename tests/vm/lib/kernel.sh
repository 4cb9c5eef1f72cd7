# shellcheck shell=bash
# Which guest kernel to boot, and its uncompressed vmlinux for a faster PVH boot.

# vm_pick_kernel [KVER]: prints KVER. Without an argument: the newest /boot/vmlinuz-* whose
# modules include rdma_rxe (the host may run a different kernel; the guest boots Debian's own).
vm_pick_kernel() {
	local want=$1 k
	if [ -n "$want" ]; then
		[ -r "/boot/vmlinuz-$want" ] || { vm_note "--kernel: no readable /boot/vmlinuz-$want"; return 1; }
		[ -d "/lib/modules/$want/kernel" ] || { vm_note "--kernel: no /lib/modules/$want"; return 1; }
		echo "$want"
		return 0
	fi
	for k in $(find /boot -maxdepth 1 -name 'vmlinuz-*' -printf '%f\n' 2>/dev/null | sed 's/^vmlinuz-//' | sort -rV); do
		if [ -n "$(find "/lib/modules/$k/kernel/drivers/infiniband/sw/rxe" -name 'rdma_rxe.ko*' 2>/dev/null)" ]; then
			echo "$k"
			return 0
		fi
	done
	vm_note "no /boot/vmlinuz-* with rdma_rxe in /lib/modules (run scripts/setup.sh: linux-image-amd64)"
	return 1
}

# vm_unpack_vmlinux BZIMAGE OUT: writes the ELF vmlinux embedded in a bzImage to OUT. The payload
# is found by the magic of its compressor (Debian uses xz; zstd and gzip for other kernels).
vm_unpack_vmlinux() {
	local bzimage=$1 out=$2 entry magic tool off
	for entry in $'\xfd7zXZ|xz -dc' $'\x28\xb5\x2f\xfd|zstd -qdc' $'\x1f\x8b\x08|gzip -dc'; do
		magic=${entry%%|*} tool=${entry#*|}
		command -v "${tool%% *}" >/dev/null || continue
		for off in $(LC_ALL=C grep -abo "$magic" "$bzimage" 2>/dev/null | head -n 3 | cut -d: -f1); do
			tail -c "+$((off + 1))" "$bzimage" | $tool >"$out" 2>/dev/null || true
			[ "$(head -c 4 "$out" 2>/dev/null)" = $'\x7fELF' ] && return 0
		done
	done
	return 1
}

# vm_boot_image KVER CACHE: prints the file qemu should boot. Under TCG the bzImage spends ~2.5 s
# decompressing itself; with CONFIG_PVH=y qemu boots the ELF vmlinux directly, so it is unpacked
# once per kernel into CACHE (atomically: parallel runs may race). Any problem: the bzImage.
vm_boot_image() {
	local kver=$1 cache=$2 bzimage=/boot/vmlinuz-$1 stamp tmp
	if [ "${RCC_VM_NO_PVH:-0}" = 1 ] || ! grep -q '^CONFIG_PVH=y' "/boot/config-$kver" 2>/dev/null; then
		echo "$bzimage"
		return 0
	fi
	stamp=$(stat -c '%s %Y' "$bzimage")
	if [ "$(cat "$cache/vmlinux.stamp" 2>/dev/null)" != "$stamp" ]; then
		if mkdir -p "$cache" 2>/dev/null && tmp=$(mktemp "$cache/vmlinux.XXXXXX" 2>/dev/null); then
			if vm_unpack_vmlinux "$bzimage" "$tmp"; then
				chmod 644 "$tmp" && mv -f "$tmp" "$cache/vmlinux" && echo "$stamp" >"$cache/vmlinux.stamp"
			else
				vm_note "could not unpack vmlinux from $bzimage; booting the bzImage (slower)"
			fi
			rm -f "$tmp"
		fi
	fi
	if [ "$(cat "$cache/vmlinux.stamp" 2>/dev/null)" = "$stamp" ] && [ -s "$cache/vmlinux" ]; then
		echo "$cache/vmlinux"
	else
		echo "$bzimage"
	fi
}
