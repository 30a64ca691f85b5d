#!/bin/busybox sh
# /init of the snia-pts QEMU test guest (tests/support/guest; packed into the initramfs by image.py).
#
# Loads the modules (null_blk without a device), mounts the host's / read-only over 9p (tag
# hostroot) at /newroot with proc, sys (configfs at sys/kernel/config), dev and tmpfs on /run,
# /tmp and /dev/shm, mounts the writable 9p share (tag share)
# at /newroot/tmp/share and runs `sh /tmp/share/guest.sh` chrooted there. Leaves in the share:
#   ready       /proc/uptime when the script starts
#   guest.log   the script's stdout+stderr (also on the console)
#   rc          the script's exit code
#   dmesg.txt   the guest kernel log at the end
#   init-error  why the script could not be started (then there is no rc)
# then powers off (QEMU runs with -no-reboot, so a panic ends QEMU too).

/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

S=/newroot/tmp/share
say() { echo "guest-init: $*"; }
fatal() {
    say "FATAL: $*"
    [ -d $S ] && mountpoint -q $S && echo "$*" > $S/init-error
    dmesg | tail -n 30
    sync
    poweroff -f
}
retry() {   # retry N CMD...: up to N tries 50 ms apart
    n=$1; shift
    while ! "$@" 2>/dev/null; do
        n=$((n - 1)); [ $n -gt 0 ] || return 1
        sleep 0.05
    done
}

while read -r m params; do     # params: image.py's MODULE_PARAMS (word-split on purpose)
    insmod "$m" $params || say "insmod $m $params failed"
done < /etc/modules.load

O9P=trans=virtio,version=9p2000.L,msize=512000
# cache=loose: the host tree does not change under the guest, and caching it is what makes
# Python imports bearable. The share stays uncached so that the host sees every write.
retry 100 mount -t 9p -o $O9P,cache=loose,ro hostroot /newroot ||
    fatal "cannot mount the 9p tag hostroot (virtio-pci/9p modules: $(lsmod | cut -d' ' -f1 | tr '\n' ' '))"
mount -t proc proc /newroot/proc
mount -t sysfs sysfs /newroot/sys
# configfs: null_blk's devices are made there (the host ceiling, pts.device.ramdev)
mount -t configfs configfs /newroot/sys/kernel/config || say "no configfs"
mount -t devtmpfs devtmpfs /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs -o mode=1777 tmpfs /newroot/dev/shm
mount -t tmpfs -o mode=755 tmpfs /newroot/run
mkdir -p /newroot/run/lock && chmod 1777 /newroot/run/lock
# The host's /tmp stays reachable at /hosttmp: the guest's /tmp is a writable tmpfs, and the
# host directories under /tmp listed in the share's `binds` (a checkout in /tmp) go back in.
mkdir -p /hosttmp && mount --bind /newroot/tmp /hosttmp
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp
mkdir -p $S
retry 100 mount -t 9p -o $O9P share $S || fatal "cannot mount the 9p tag share"
while read -r p; do
    rel=${p#/tmp/}
    mkdir -p "/newroot/tmp/$rel" && mount --bind "/hosttmp/$rel" "/newroot/tmp/$rel" ||
        fatal "cannot make host $p visible in the guest"
done < $S/binds

retry 200 test -b /dev/nvme0n1 || fatal "no /dev/nvme0n1 after 10 s"

# HOME is /tmp (writable). Seed it with the host root's matplotlib font cache when there is
# one: building it takes about 15 s of TCG time in every run that draws a report.
[ -d /newroot/root/.cache/matplotlib ] && mkdir -p /newroot/tmp/.cache &&
    cp -a /newroot/root/.cache/matplotlib /newroot/tmp/.cache/

# A long host name (62 characters; the kernel takes up to 64): the suite's names for
# what it makes carry it, and null_blk cuts its disk's name to 31 characters (issue 38 §3)
hostname ci-guest-with-a-host-name-longer-than-null-blk-disk-names.test ||
    say "cannot set the host name"
cut -d' ' -f1 /proc/uptime > $S/ready
say "ready after $(cat $S/ready) s of guest uptime; running guest.sh"
( env -i HOME=/tmp TERM=dumb LANG=C.UTF-8 \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      /bin/chroot /newroot /bin/sh /tmp/share/guest.sh < /dev/null
  echo $? > $S/rc ) 2>&1 | tee $S/guest.log
say "guest.sh exited with $(cat $S/rc)"
dmesg > $S/dmesg.txt
sync
poweroff -f
