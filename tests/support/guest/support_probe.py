"""The probe boot that recorded the support probe's files of tests/data/qemu-10/fdp/ (its README
names them; issue 49 §3: telemetry, sanitize, the Timestamp and the DSSD features, a stray
namespace identifier): QEMU 10's controller as the suite's guest has it (run_guest's drive,
unchanged), read-only, by Debian 12's nvme-cli 2.3. Not a test: run by hand, its outputs copied into
tests/data/qemu-10/fdp/ and labelled in tests/data/qemu-10/README.md.

    .venv/bin/python -m tests.support.guest.support_probe OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.guest import qemu
from tests.support.guest.image import default_cache_dir, ensure_image

SCRIPT = r"""
O=/tmp/share/out; mkdir -p $O
C=/dev/nvme0
r() {   # r FILE CMD...: stdout to FILE, stderr to FILE.stderr.txt, exit status to FILE.rc
    f=$1; shift
    "$@" > $O/$f 2> $O/$f.stderr.txt; echo $? > $O/$f.rc
    [ -s $O/$f.stderr.txt ] || rm $O/$f.stderr.txt
}
# Timestamp (0Eh): its value (8 bytes: timestamp, Synch bit 0 and Timestamp Origin of byte 6)
r feature-0eh_current.bin nvme get-feature $C -f 0x0e -s 0 --raw-binary
r feature-0eh_current.txt nvme get-feature $C -f 0x0e -s 0
# Number of Queues (07h), the DSSD features Telemetry Profile (C8h) and DSSD Asynchronous
# Event Configuration (C9h): current, default, capabilities
for fid in 07 c8 c9; do
    r feature-${fid}h_current.txt nvme get-feature $C -f 0x$fid -s 0
    r feature-${fid}h_default.txt nvme get-feature $C -f 0x$fid -s 1
    r feature-${fid}h_capabilities.txt nvme get-feature $C -f 0x$fid -s 3
done
# Sanitize Status (81h), LBA Status Information (0Eh), Device Capabilities (C4h), Telemetry
# String (C9h), Telemetry Host-Initiated (07h, LSP 0) and Controller-Initiated (08h)
for id in 81 0e c4 c9 07 08; do
    r log-${id}h_support.bin nvme get-log $C --log-id=0x$id --log-len=512 --raw-binary
done
# Identify Controller (CNS 01h, which uses no namespace identifier) with NSID 1, and with 0
r identify-cns01h-nsid1.bin nvme admin-passthru $C --opcode=0x06 --namespace-id=1 \
    --cdw10=1 --data-len=4096 --read --raw-binary
r identify-cns01h-nsid0.bin nvme admin-passthru $C --opcode=0x06 --namespace-id=0 \
    --cdw10=1 --data-len=4096 --read --raw-binary
"""


def main(out: Path) -> int:
    image = ensure_image(default_cache_dir())
    with qemu.backing_file(256 << 20) as disk:
        result = qemu.run_guest(image, SCRIPT, out, disk, serial="PTSQEMU0001", timeout=600)
    print(f"rc {result.returncode} in {result.seconds:.0f} s")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
