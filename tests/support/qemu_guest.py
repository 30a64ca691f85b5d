"""The one boot of the QEMU (TCG) guest that the QEMU e2e tests share (tests/support/guest):
its script, what it leaves (Guest) and the session fixture that boots it (conftest.py).

The guest has three drives: an NVMe drive on QEMU's NVMe controller (namespace 1 backed by
an emulated SSD, pts.emulate; namespace 2 a small raw file in /dev/shm for the known write
below), a SATA disk on QEMU's ICH9 AHCI controller (libata) and a SCSI disk on virtio-scsi,
each of these two a raw file in /dev/shm. The script runs the suite as users run it against
each (tests/e2e/test_qemu_e2e.py: NVMe; test_qemu_sata_sas.py: SATA and SCSI;
test_qemu_holders.py: both, held), in three lanes at once, one per drive (each drive's runs
in turn), on the guest's 2 vCPUs: most of a run under TCG is its Python process starting
(about 25 s of CPU each), which a lane of refused runs spends while the NVMe lane's IOPS run
waits on its drive.
"""

from __future__ import annotations

import compileall
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

from pts.results.ledger import read_ledger
from tests.support.guest import GuestResult, run_guest
from tests.support.guest.qemu import Disk
from tests.support.helpers import REPO
from tests.support.ptsrun import IOPS, pts_argv

SERIAL = "PTSQEMU0001"
KEPT = "guest.json"       # in the share: what load() reads back
# Namespace 1, on the emulated SSD: 64 MiB, so WIPC writes 128 MiB (the emulated SSD programs
# about 27 MB/s: pts/emulate/profiles.py 'default').
DISK_BYTES = 64 << 20
# The known write (test_qemu_e2e: log 09h's unit): 10^9 bytes to namespace 2 before any run, in
# KNOWN_PASSES passes of KNOWN_COUNT direct writes of KNOWN_BS bytes (1,600,000 = 3,125 x 512:
# 10^9 bytes is 1,953,125 = 5^9 sectors, so no power-of-two block divides it) over a namespace
# of NS2_BYTES. QEMU counts written bytes per namespace and sums them over the subsystem in
# log 09h (units of 10^9 bytes, 0 below 10^9 and 1 from there on) and over the controller in
# C0h (bytes): 09h reads 0 before it, and 1 at every step of every run after it.
KNOWN_BYTES = 10**9
KNOWN_BS, KNOWN_COUNT = 1_600_000, 25
NS2_BYTES = KNOWN_BS * KNOWN_COUNT                  # 40,000,000 = 78,125 sectors of 512 B
KNOWN_PASSES = KNOWN_BYTES // NS2_BYTES
# The guest's time is CPU under TCG, shared with the host's device runs beside it: 1,100 s of
# its script when a 1,200 s limit killed it in stop 38's CI run, 374-649 s in earlier ones.
GUEST_TIMEOUT = 2400
SATA_SERIAL, SATA_MODEL = "PTSSATA0001", "PTS SATA"
SCSI_SERIAL, SCSI_MODEL = "PTSSAS0001", "PTS SAS"
SD_BYTES = 64 << 20
PYTHON = Path(sys.executable)          # the venv's python: the guest sees the same path
# The IOPS test as users run it (tests.support.ptsrun.pts_argv), with the guest's python,
# and --no-report: the guest's runs store their data and the host renders the reports the
# tests read (Guest.report). Rendering is CPU work on stored files only, and under TCG it
# was most of a short run's time: a 5-round IOPS run took 9.5 s of CPU on the host, about
# half of it the PDF, and 450-490 s in the guest (three at once, stop 38's CI run).
PTS_IOPS = shlex.join(pts_argv("--no-report", target=IOPS, python=PYTHON))
# PTS-E 1.1 (one tracking cell, RND 4KiB 0/100), 1 s points, 5 rounds (the steady-state
# window: the fewest the suite takes), two block sizes of writes: 2 points a round, and the
# host ceiling measures two shapes (its smallest and its largest block size). 64 KiB, not
# 1024 KiB: at TC 4 / QD 32, 1024 KiB writes put 128 MiB in flight on the emulated SSD
# behind the guest, and each point waited about 7 s for them to drain.
COMMON = ("--device /dev/nvme0n1 --destructive --spec pts-e-1.1 --point-seconds 1 "
          "--max-rounds 5 --iops-block-sizes 64KiB,4KiB --iops-rw-mixes 0/100 "
          "--form-factor U.2/U.3")     # QEMU models no form factor: the operator declares one

# Runs chrooted in the host's / (read-only); /tmp/share is the writable share.
SCRIPT = r"""
O=/tmp/share/out; mkdir -p $O
run() {   # run NAME CMD...: stdout, stderr, exit code and seconds into $O/NAME.*
    name=$1; shift
    t0=$(date +%s.%N)
    "$@" > $O/$name.out 2> $O/$name.err
    echo $? > $O/$name.rc
    echo "$t0 $(date +%s.%N)" | awk '{printf "%.2f\n", $2 - $1}' > $O/$name.seconds
    echo "== $name: rc $(cat $O/$name.rc), $(cat $O/$name.seconds) s"
}
# SATA and SCSI disks (test_qemu_sata_sas.py): which /dev/sdX is which, by vendor (no udev).
n=0
while [ $(ls /sys/block | grep -c '^sd') -lt 2 ] && [ $n -lt 300 ]; do
    sleep 0.1; n=$((n + 1))
done
for d in /sys/block/sd*; do
    case $(cat $d/device/vendor) in ATA*) SATA=/dev/${d##*/};; *) SCSI=/dev/${d##*/};; esac
done
echo "SATA=$SATA SCSI=$SCSI" > $O/disks
cd @REPO@
export PYTHONDONTWRITEBYTECODE=1      # the host's / is read-only here; boot() compiled pts/
# pytest's plugins from the venv's entry points are the project's test tools (xdist, timeout,
# anyio, whose plugin imports trio where selenium brought it): none of them is the suite's
# (conftest.py names its plugins), and loading them cost each of the guest's pytest runs
# about a third of its start-up (host: 0.7 s of 2.0 s of collection; the guest about 20x that)
export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
SD="--destructive --spec pts-e-1.1 --point-seconds 1 --max-rounds 5 --iops-block-sizes 4KiB \
    --iops-rw-mixes 0/100"
# disk KIND NAME PURGE [OPTION...]: the suite on the SATA or SCSI disk into /tmp/share/KIND-NAME
disk() {
    dev=$SATA; [ $1 = scsi ] && dev=$SCSI
    reports=/tmp/share/$1-$2
    run $1-$2 @PTS_IOPS@ --device $dev $SD --purge $3 --reports-dir $reports ${4:+"$4"}
}
nvme_lane() {
    run id-ctrl nvme id-ctrl /dev/nvme0 -o json
    run sanitize-raw nvme sanitize /dev/nvme0 --sanact=2
    run nsid cat /sys/block/nvme0n1/nsid /sys/block/nvme0n2/nsid
    # The known write (KNOWN_BYTES to namespace 2) before any run, between two reads of logs
    # 09h and C0h
    run 09h-before nvme endurance-log /dev/nvme0 --group-id=1 -o json
    run c0h-before nvme ocp smart-add-log /dev/nvme0 -o json
    run known-write sh -c 'n=0; while [ $n -lt @KNOWN_PASSES@ ]; do
        dd if=/dev/zero of=/dev/nvme0n2 bs=@KNOWN_BS@ count=@KNOWN_COUNT@ oflag=direct \
            status=none || exit 1
        n=$((n + 1)); done'
    run 09h-known nvme endurance-log /dev/nvme0 --group-id=1 -o json
    run c0h-known nvme ocp smart-add-log /dev/nvme0 -o json
    run dry-run @PTS_IOPS@ @COMMON@ --purge auto --dry-run
    # must stop before writing anything: QEMU has no sanitize, 10.0 neither
    run sanitize @PTS_IOPS@ @COMMON@ --purge sanitize --reports-dir /tmp/share/refused \
        --junitxml=/tmp/share/sanitize.xml
    # Over-temperature threshold 300 K, below QEMU's constant 323 K: the controller reports
    # critical warning bit 1 (temperature) in its SMART log from now on, as a hot drive would,
    # so the IOPS run is a device-health failure (its spec outcome kept in the message)
    run hot-threshold nvme set-feature /dev/nvme0 --feature-id=4 --value=300
    # The one guest run with a host ceiling: on null_blk (image.py loads it, init.sh mounts
    # configfs), the device sized to the guest's memory; what is left of it after the run:
    run suite @PTS_IOPS@ @COMMON@ --purge auto --reports-dir /tmp/share/reports \
        --junitxml=/tmp/share/suite.xml --host-ceiling auto
    { find /sys/kernel/config/nullb -mindepth 1 -maxdepth 1 -type d
      for f in /dev/nullb* /dev/pts-ceiling-*; do [ ! -e "$f" ] || ls -ld "$f"; done
    } > $O/nullb-after 2>&1
    # The drive's logs as nvme-cli prints them after the run (no I/O since its last step):
    # test_qemu_e2e decodes them itself and applies the OCP requirements' rules
    run c0h-after nvme ocp smart-add-log /dev/nvme0 -o json
    run c0h-raw nvme get-log /dev/nvme0 --log-id=0xc0 --log-len=512 --raw-binary
    run 09h-after nvme endurance-log /dev/nvme0 --group-id=1 -o json
    run smart-after nvme smart-log /dev/nvme0 -o json
}
sata_lane() {
    run sata-smart smartctl --json -a $SATA
    disk sata refused security-erase   # QEMU (7.2 and 10.0) has no ATA Security feature set
    disk sata refused2 sanitize        # no ATA SANITIZE feature set: refused
    disk sata iops trim --no-purge-probe            # the short IOPS test on each
}
scsi_lane() {
    run scsi-smart smartctl --json -a $SCSI
    # What numpy finds in the guest's CPU (tests.support.guest.qemu.CPU_MODEL): its
    # baseline, no AVX2.
    run cpu-features @PYTHON@ -c "import json; from numpy._core._multiarray_umath import \
__cpu_features__ as f; print(json.dumps(f))"
    disk scsi refused2 format          # a FORMAT UNIT that reports success, erases nothing
    disk scsi refused sanitize         # no SCSI SANITIZE: the drive's invalid opcode
    disk scsi iops trim --no-purge-probe
}
# Holders for real (test_qemu_holders.py), once the disks' own tests are done: an MD RAID1
# over two partitions and an LVM volume on a third partition of the SATA disk, a dm-linear
# mapping over the whole SCSI disk, 2 MiB of known data on each. No udev in the guest: LVM
# and libdevmapper make their /dev nodes themselves; /etc is read-only: no LVM backups.
export DM_DISABLE_UDEV=1 LVM_SUPPRESS_FD_WARNINGS=1
LVMCONF='devices { obtain_device_list_from_udev = 0 use_devicesfile = 0 }
activation { udev_sync = 0 udev_rules = 0 monitoring = 0 }
backup { backup = 0 archive = 0 } global { use_lvmpolld = 0 }'
HELD="/dev/md0 /dev/mapper/ptsvg-data /dev/mapper/ptslinear"
sums() { for d in $HELD; do
    echo "$(dd if=$d bs=1M count=2 iflag=direct status=none | sha256sum | cut -d' ' -f1) $d"
done; }
holders() (
    set -e
    printf 'label: gpt\n,20MiB\n,20MiB\n,\n' | sfdisk -q $SATA
    n=0; while [ ! -b ${SATA}3 ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
    mdadm --create /dev/md0 --run --quiet --level=1 --raid-devices=2 --metadata=1.2 \
        --assume-clean ${SATA}1 ${SATA}2
    lvm pvcreate -q --config "$LVMCONF" ${SATA}3
    lvm vgcreate -q --config "$LVMCONF" ptsvg ${SATA}3
    lvm lvcreate -q -y -Zn -Wn --config "$LVMCONF" -n data -L 8M ptsvg
    dmsetup create ptslinear --noudevsync --table "0 $(blockdev --getsz $SCSI) linear $SCSI 0"
    head -c 2097152 /dev/urandom > /tmp/held.data
    for d in $HELD; do dd if=/tmp/held.data of=$d bs=1M oflag=direct conv=fsync status=none; done
    sha256sum < /tmp/held.data | cut -d' ' -f1 > $O/held-data.sha256
    for p in ${SATA#/dev/}1 ${SATA#/dev/}2 ${SATA#/dev/}3 ${SCSI#/dev/}; do
        echo "$p $(ls /sys/class/block/$p/holders | tr '\n' ' ')"
    done > $O/holders-sysfs
    for h in /sys/block/dm-* /sys/block/md*; do
        echo "${h##*/} $(cat $h/dm/name $h/dm/uuid $h/md/level 2>/dev/null | tr '\n' ' ')"
    done > $O/holders-kinds
    sums > $O/held-before.sha256
)
holders_lane() {
    run holders-setup holders
    # both disks in one session: its gate refuses the whole session, naming every holder
    run holders @PTS_IOPS@ --device $SATA --device $SCSI $SD --purge trim \
        --reports-dir /tmp/share/held
    sums > $O/held-after.sha256
}
nvme_lane &
{ sata_lane & scsi_lane; wait; holders_lane; } &
wait
exit 0
"""


@dataclass
class Guest:
    result: GuestResult
    out: Path
    wall_seconds: float
    ftl_before: dict          # the emulated SSD's counters before the boot and after it
    ftl_after: dict
    guest_pdfs: tuple[Path, ...] = ()   # report files the guest wrote itself (--no-report: none)
    # run folder -> `python -m pts report FOLDER` as self.report ran it
    made: dict[Path, subprocess.CompletedProcess] = field(default_factory=dict)

    def report(self, folder: Path) -> Path:
        """`folder`'s report.pdf, rendered here on the host from the run's stored files (the
        guest runs with --no-report), once. The NVMe IOPS run's by `python -m pts report
        FOLDER`, what that command did kept in self.made: the command the guest's runs name
        (test_no_report_in_the_guest_and_rendered_from_its_files checks it), whose render
        the tests read, where they rendered that report twice (in process, then by the
        command: 8 and 10 s of a guest session's test calls); the others in process (the
        command's start would cost more than their small reports)."""
        pdf = folder / "report.pdf"
        if pdf.exists():
            return pdf
        if folder == self.run_folder():
            self.made[folder] = subprocess.run(
                [sys.executable, "-m", "pts", "report", str(folder)], cwd=REPO,
                capture_output=True, text=True, timeout=300)
            assert self.made[folder].returncode == 0, self.made[folder]
        else:
            from pts.report import render
            render(folder)
        return pdf

    def rendered(self, folder: Path) -> Path:
        """`folder`, its report made (self.report), for readers of folder/report.pdf."""
        self.report(folder)
        return folder

    def rc(self, name: str) -> int:
        return int((self.out / f"{name}.rc").read_text())

    def text(self, name: str) -> str:
        return "".join((self.out / f"{name}.{s}").read_text(errors="replace")
                       for s in ("out", "err"))

    def seconds(self, name: str) -> float:
        return float((self.out / f"{name}.seconds").read_text())

    def junit(self, name: str) -> dict[str, list[tuple[str, str]]]:
        """Per test case, its outcome elements; <properties> (the run's figures) is not one."""
        cases = ElementTree.parse(self.out.parent / f"{name}.xml").getroot().iter("testcase")
        outcomes = ("failure", "error", "skipped")
        return {c.get("name"): [(e.tag, e.get("message", "")) for e in c if e.tag in outcomes]
                for c in cases}

    def disks(self) -> dict[str, str]:
        """{"sata": /dev/sdX, "scsi": /dev/sdY} as the guest found them (by vendor)."""
        words = (self.out / "disks").read_text().split()
        return {k.lower(): v for k, v in (w.split("=") for w in words)}

    def run_folder(self, reports: str = "reports", serial: str = SERIAL) -> Path:
        """The one run folder the guest left in share/`reports` for the drive `serial`."""
        runs = list((self.out.parent / reports).glob(f"*_{serial}/*"))
        assert len(runs) == 1, self.text("suite" if reports == "reports" else reports)[-4000:]
        return runs[0]

    def ledger(self, record_type: str, reports: str = "reports",
               serial: str = SERIAL) -> list[dict]:
        records, _ = read_ledger(self.run_folder(reports, serial) / "ledger.jsonl")
        return [r.data for r in records if r.data["type"] == record_type]


def rewritten_bytecode() -> None:
    """The bytecode pytest makes of the modules whose asserts it rewrites (conftest.py, the
    suite's test module and the plugins conftest.py names: pts.session.plugin,
    pts.suite.datasheet), written here on the host as the guest's runs would read it
    (`__pycache__/*-pytest-*.pyc`): compileall's is not the one pytest reads, and with
    PYTHONDONTWRITEBYTECODE (CI's environment, and the guest's) no process ever wrote it, so
    each of the guest's suite runs parsed and rewrote them again under TCG (on the host: a
    collection 0.73 s of CPU without it, 0.70 s with it). A failure here costs only that."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    try:
        subprocess.run([str(PYTHON), "-m", "pytest", IOPS, "--collect-only", "-q",
                        "-p", "no:cacheprovider"], cwd=REPO, capture_output=True, timeout=120,
                       env=env | {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    except (OSError, subprocess.TimeoutExpired) as exc:     # the guest rewrites them, as before
        print(f"\nQEMU e2e: pytest's bytecode not written beforehand: {exc}")


def boot(image, emulated_ssd, share: Path) -> Guest:
    """Boot the guest once with its three drives and run SCRIPT (see the module docstring)."""
    from pts import emulate
    from tests.support.guest import backing_file
    script = (SCRIPT.replace("@REPO@", str(REPO)).replace("@PTS_IOPS@", PTS_IOPS)
              .replace("@PYTHON@", shlex.quote(str(PYTHON)))
              .replace("@COMMON@", COMMON).replace("@KNOWN_PASSES@", str(KNOWN_PASSES))
              .replace("@KNOWN_BS@", str(KNOWN_BS)).replace("@KNOWN_COUNT@", str(KNOWN_COUNT)))
    before = emulate.read_stats(emulated_ssd)
    start = time.monotonic()
    # The project's bytecode, written on the host before the boot: the guest sees the tree
    # read-only, and where the host's environment says PYTHONDONTWRITEBYTECODE (CI's does) no
    # process ever wrote it, so each of the guest's Python processes would compile pts/ under
    # TCG again (on the host: 1.2 s of CPU for all of it; pts collect-only 2.24 s without
    # bytecode, 1.85 s with).
    compileall.compile_dir(REPO / "pts", quiet=1)
    compileall.compile_dir(REPO, maxlevels=0, quiet=1)
    rewritten_bytecode()
    with backing_file(SD_BYTES) as sata, backing_file(SD_BYTES) as scsi, \
            backing_file(NS2_BYTES) as ns2:
        disks = (Disk("sata", sata, SATA_SERIAL, SATA_MODEL),
                 Disk("scsi", scsi, SCSI_SERIAL, SCSI_MODEL))
        # cache=none: every guest write reaches the FTL model when the guest issues it
        result = run_guest(image, script, share, Path(emulated_ssd.image), SERIAL,
                           timeout=GUEST_TIMEOUT, drive_options="cache=none,aio=threads",
                           keep_visible=(REPO,), disks=disks, namespaces=(ns2,))
    wall = time.monotonic() - start
    pdfs = tuple(share.rglob("report.pdf"))
    after = emulate.read_stats(emulated_ssd)
    # what load() needs to give the tests this boot again (PTS_TEST_GUEST=reuse:SHARE)
    (share / KEPT).write_text(json.dumps({
        "wall_seconds": wall, "ftl_before": before, "ftl_after": after,
        "guest_pdfs": [str(p) for p in pdfs], "seconds": result.seconds,
        "ready_seconds": result.ready_seconds}))
    print(f"\nQEMU e2e: guest ready {result.ready_seconds:.1f} s, powered off "
          f"{result.seconds:.1f} s after QEMU start; share {share}")
    return Guest(result, share / "out", wall, before, after, pdfs)


def load(share: Path) -> Guest:
    """A finished boot's Guest again from its share folder (boot() kept what it needs there):
    the guest tests' assertions re-run on it without booting (PTS_TEST_GUEST=reuse:SHARE,
    tests/e2e/conftest.py), e.g. after a test was changed."""
    from tests.support.guest.qemu import collect
    kept = json.loads((share / KEPT).read_text())
    return Guest(collect(share, kept["seconds"], kept["ready_seconds"]), share / "out",
                 kept["wall_seconds"], kept["ftl_before"], kept["ftl_after"],
                 tuple(Path(p) for p in kept["guest_pdfs"]))
