#!/bin/busybox sh
# shellcheck shell=dash
# PID 1 of the initramfs (static busybox only): mount the host's / read-only over virtio-9p under
# a RAM overlay, mount the per-run job directory at /rcc-vm-job, and switch_root into the host's
# userland to run the guest stage from the job directory.
B=/bin/busybox
fail() {
	echo "rcc-vm(initramfs): $*"
	$B poweroff -f
}
$B mkdir -p /proc /sys /dev /lower /upper /newroot
$B mount -t proc proc /proc
$B mount -t sysfs sys /sys
$B mount -t devtmpfs dev /dev
for m in $($B cat /modorder); do
	$B insmod "/mods/$m" || echo "rcc-vm(initramfs): insmod $m failed"
done
opts=trans=virtio,version=9p2000.L,msize=512000
$B mount -t 9p -o "$opts,ro,cache=loose" hostroot /lower || fail "mounting the host root (9p) failed"
$B mount -t tmpfs -o mode=0755 tmpfs /upper
$B mkdir -p /upper/data /upper/work
$B mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work /newroot ||
	fail "overlay mount failed"
$B mkdir -p /newroot/rcc-vm-job
$B mount -t 9p -o "$opts" rccvm_job /newroot/rcc-vm-job || fail "mounting the job directory failed"
$B mount --move /proc /newroot/proc
$B mount --move /sys /newroot/sys
$B mount --move /dev /newroot/dev
echo "rcc-vm(initramfs): switch_root at $($B cut -d' ' -f1 /newroot/proc/uptime)s"
exec $B switch_root /newroot /bin/bash /rcc-vm-job/guest-stage.sh /rcc-vm-job
