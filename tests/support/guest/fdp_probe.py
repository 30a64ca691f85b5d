"""The probe boot that recorded tests/data/qemu-10/fdp/ (issue 49 §3): QEMU 10's controller with
the OCP extensions in a subsystem with Flexible Data Placement, read by Debian 12's nvme-cli
2.3 before and after known writes. Not a test: run by hand, its outputs copied into
tests/data/qemu-10/fdp/ and labelled in tests/data/qemu-10/README.md.

    .venv/bin/python -m tests.support.guest.fdp_probe OUT_DIR

The guest and its drive are run_guest's (qemu.py, whose kernel command line has iomem=relaxed
for the BAR0 read below, and whose subsystem has FDP); only the reclaim unit size differs: 8
MiB here, so that the writes below fill reclaim units (`qemu-system-x86_64 -device
nvme-subsys,help`: fdp, fdp.runs, fdp.nrg, fdp.nruh; `-device nvme-ns,help`: fdp.ruhs).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.guest import qemu
from tests.support.guest.image import default_cache_dir, ensure_image

# 4 reclaim unit handles of 8 MiB reclaim units in 1 reclaim group; the namespace may use
# handles 0, 1 and 2 (its placement handles 0..2)
SUBSYS = "nvme-subsys,id=nvmsubsys0,fdp=on,fdp.runs=8M,fdp.nrg=1,fdp.nruh=4"
NAMESPACE = "nvme-ns,drive=nvm,nsid=1,bus=nvmectrl0,fdp.ruhs=0;1;2"
BACKING = 256 << 20

SCRIPT = r"""
O=/tmp/share/out; mkdir -p $O
C=/dev/nvme0; N=/dev/nvme0n1
r() {   # r FILE CMD...: stdout to FILE, stderr to FILE.stderr.txt, exit status to FILE.rc
    f=$1; shift
    "$@" > $O/$f 2> $O/$f.stderr.txt; echo $? > $O/$f.rc
    [ -s $O/$f.stderr.txt ] || rm $O/$f.stderr.txt
}
logs() {   # logs TAG: every log page of the probe, as bytes and as nvme-cli prints it
    t=$1
    r log-00h_$t.bin nvme get-log $C --log-id=0x00 --log-len=1024 --raw-binary
    r log-05h_$t.bin nvme get-log $C --log-id=0x05 --log-len=4096 --raw-binary
    r log-09h_$t.bin nvme get-log $C --log-id=0x09 --lsi=1 --log-len=512 --raw-binary
    r log-12h_$t.bin nvme get-log $C --log-id=0x12 --log-len=1024 --raw-binary
    r log-20h_$t.bin nvme get-log $C --log-id=0x20 --lsi=1 --log-len=512 --raw-binary
    r log-21h_$t.bin nvme get-log $C --log-id=0x21 --lsi=1 --log-len=512 --raw-binary
    r log-22h_$t.bin nvme get-log $C --log-id=0x22 --lsi=1 --log-len=64 --raw-binary
    r log-23h-host_$t.bin nvme get-log $C --log-id=0x23 --lsi=1 --lsp=0 --log-len=4096 --raw-binary
    r log-23h-ctrl_$t.bin nvme get-log $C --log-id=0x23 --lsi=1 --lsp=1 --log-len=4096 --raw-binary
    r fdp-configs_$t.json nvme fdp configs $C --endgrp-id=1 -o json
    r fdp-usage_$t.json nvme fdp usage $C --endgrp-id=1 -o json
    r fdp-stats_$t.json nvme fdp stats $C --endgrp-id=1 -o json
    r fdp-events_$t.json nvme fdp events $C --endgrp-id=1 -o json
    r fdp-status_$t.json nvme fdp status $N -o json
}
r nvme-id-ctrl.json nvme id-ctrl $C -o json
r nvme-id-ctrl.bin nvme id-ctrl $C -b
r nvme-id-ns.json nvme id-ns $N -o json
r nvme-id-ns.bin nvme id-ns $N -b
r supported-log-pages.json nvme supported-log-pages $C -o json
r effects-log.json nvme effects-log $C -o json
r fid-support-effects-log.json nvme fid-support-effects-log $C -o json
r feature-02h_current.txt nvme get-feature $C -f 0x02 -s 0
r feature-02h_default.txt nvme get-feature $C -f 0x02 -s 1
r feature-02h_capabilities.txt nvme get-feature $C -f 0x02 -s 3
r feature-1dh_current.txt nvme get-feature $C -f 0x1d --cdw11=1 -s 0
# Controller registers and PCI configuration space (issue 49 §3, NVMe-CFG and PCI)
r show-regs.bin nvme show-regs $C -o binary
r show-regs.json nvme show-regs $C -o json
P=$(readlink -f /sys/class/nvme/nvme0/device)
# nvme-cli 2.3's show-regs fails on this controller (above): the first 64 bytes of BAR0 (CAP,
# VS, INTMS, INTMC, CC, CSTS, NSSR, AQA, ASQ, ACQ, CMBLOC, CMBSZ, BPINFO, BPRSEL, BPMBL)
# read as aligned 32-bit words, as the NVMe registers want to be read
r nvme-regs-bar0.bin python3 -c "
import mmap, os, struct, sys
fd = os.open('$P/resource0', os.O_RDONLY | os.O_SYNC)
m = memoryview(mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ)).cast('I')
sys.stdout.buffer.write(struct.pack('<16I', *(m[i] for i in range(16))))"
r pci-config.bin cat $P/config
r pci-resource.txt cat $P/resource
r pci-link.txt sh -c "cd $P && grep -H . current_link_speed current_link_width \
    max_link_speed max_link_width"
r lspci-vvv.txt lspci -vvv -s ${P##*/}
for f in 0e 23 24 25; do
    r feature-${f}h_capabilities.txt nvme get-feature $C -f 0x$f -s 3
done
r log-06h.bin nvme get-log $C --log-id=0x06 --log-len=564 --raw-binary
r log-07h.bin nvme get-log $C --log-id=0x07 --lsp=1 --log-len=512 --raw-binary
r log-02h.bin nvme get-log $C --log-id=0x02 --log-len=512 --raw-binary
# Which standard logs the controller answers (STD-LOG-*): the first 512 bytes of each
for id in 01 03 08 0d 13 14 19 25; do
    lsp=0; [ $id = 0d ] && lsp=1      # Persistent Event: establish a reporting context
    r log-${id}h_support.bin nvme get-log $C --log-id=0x$id --lsp=$lsp --log-len=512 --raw-binary
done
logs 0
# 64 MiB through placement handle 0: 256 writes of 256 KiB, 512 blocks of 512 bytes each,
# directive type 2 (data placement), directive specific 0. nvme-cli 2.3's `write` fails now
# and then before sending anything ("submit-io: Invalid argument", seen at 512 KiB): each
# write is retried until it goes (the FDP statistics log counts only what the drive got)
dd if=/dev/urandom of=/tmp/chunk bs=256K count=1 2>/dev/null
i=0
while [ $i -lt 256 ]; do
    n=0
    until nvme write $N --start-block=$((i * 512)) --block-count=511 --data-size=262144 \
            --data=/tmp/chunk --dir-type=2 --dir-spec=0 > /dev/null 2>> $O/writes.txt; do
        n=$((n + 1)); [ $n -lt 20 ] || { echo "write $i gave up" >> $O/writes.txt; break; }
    done
    i=$((i + 1))
done
logs after-64MiB-phndl0
# 16 MiB of plain writes (no directive: the namespace's default handle) after the first 64 MiB
dd if=/dev/urandom of=$N bs=1M count=16 seek=64 oflag=direct 2>> $O/writes.txt
sync
logs after-16MiB-plain
# Event disclosure: host events on for handle 1 (type 0h RU Not Fully Written, 3h Invalid
# Placement Identifier), 1 MiB through handle 1, then the host moves handle 1 to a new
# reclaim unit (I/O Management Send, Reclaim Unit Handle Update) with 7 MiB of it unwritten
r set-events.txt nvme fdp set-events $N --placement-handle=1 --event-types=0,3 --enable
r feature-1eh_phndl1.txt nvme get-feature $C -f 0x1e --cdw11=0x10001 --data-len=8 -s 0
i=0
while [ $i -lt 4 ]; do
    until nvme write $N --start-block=$((163840 + i * 512)) --block-count=511 --data-size=262144 \
            --data=/tmp/chunk --dir-type=2 --dir-spec=1 > /dev/null 2>> $O/writes.txt; do :; done
    i=$((i + 1))
done
r ruh-update.txt nvme fdp update $N --pids=1
logs after-1MiB-phndl1-update
"""


def main(out: Path) -> int:
    plain = qemu.qemu_argv

    def with_fdp(*args, **kwargs) -> list[str]:
        argv = plain(*args, **kwargs)
        argv[argv.index(qemu.SUBSYSTEM)] = SUBSYS
        argv[argv.index(qemu.NAMESPACE)] = NAMESPACE
        return argv

    qemu.qemu_argv = with_fdp
    image = ensure_image(default_cache_dir())
    with qemu.backing_file(BACKING) as disk:
        result = qemu.run_guest(image, SCRIPT, out, disk, serial="PTSQEMU0001", timeout=600)
    print(f"rc {result.returncode} in {result.seconds:.0f} s")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
