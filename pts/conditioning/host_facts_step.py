"""The host-checkable facts of an NVMe drive, read beside the device counters (issue 49 §3):
at a test's start everything pts.tools.host_read.read_all reads (Identify, features, log
support, the FDP logs, the PCI function) into the run folder's host-facts/TEST/ and the
ledger (an nvme_facts record: what pts.stored.host_judge judges); and at every step of the
test after it (after purge, after WIPC, after round N, test end) the FDP Statistics log (22h)
when the drive answered it at the start: media and host bytes per round, the FDP WAF
(pts.stored.host_facts). Beside them, the one write of this step: the latency monitor
configured after the test start's reads and its log read at test end
(pts.conditioning.latency_monitor, under --destructive only).

Read-only nvme-cli commands here (get-log, id-ctrl, id-ns, get-feature). A read the drive
refuses is kept in its words (the record's `refused`, or `error`); nothing here fails the
run: a fact not read is a fact the verdicts call NOT CHECKED, not a reason to stop measuring.
Not NVMe (loop devices, the emulated SSD, ATA, SCSI) or NVMe on another host (its runner
keeps no bytes, which every read here decodes): nothing is read or recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pts.conditioning import latency_monitor
from pts.config.nvme_layout import FDP_STATS_SIZE
from pts.device.platform_device import pci_function
from pts.results import records
from pts.tools import commands, host_read, nvme
from pts.tools.nvme_facts import fdp_stats, json_safe
from pts.tools.ocp_log_read import read_bytes

FOLDER = "host-facts"
TEST_START = "test start"           # the step at which everything is read
TEST_END = "test end"               # the latency monitor's log read again (latency_monitor)
SYS = Path("/sys")
LOG_FDP_STATS = 0x22
# ledger path -> the Endurance Group whose log 22h answered at the current test's start
_fdp_group: dict[str, int] = {}


def record(run, test: str, when: str, round_no: int | None = None, *,
           runner: Callable | None = None) -> None:
    """The facts at `when` for `run`'s device (see the module docstring). `runner` stands
    for commands.run (a test's recorded answers)."""
    dev = run.device
    if dev.transport != "nvme" or dev.remote is not None or dev.emulated:
        return
    key = str(run.ledger.path)
    folder = run.ledger.path.parent / FOLDER / test
    if when == TEST_START:
        _fdp_group.pop(key, None)
        _read_all(run, test, dev, folder, key, runner)
        latency_monitor.configure(run, test, folder, runner)    # under --destructive only
    elif key in _fdp_group:
        _read_stats(run, test, when, round_no, folder, _fdp_group[key], runner)
    if when == TEST_END:
        latency_monitor.read_after(run, test, folder, runner)


def _tag(when: str) -> str:
    return when.replace(" ", "-")


def _read_all(run, test: str, dev, folder: Path, key: str, runner: Callable | None) -> None:
    try:
        facts = host_read.read_all(
            nvme.controller_path(dev.path), dev.path, folder, _tag(TEST_START),
            pci_device=pci_function(SYS, dev.kname), run=runner, log_file=run.commands_log)
    except Exception as exc:       # noqa: BLE001 - never fails the run: kept, said
        error = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
        run.ledger.append(records.NvmeFacts(test=test, moment=TEST_START, facts={}, files={},
                                            refused={}, folder=None, error=error))
        run.write(f"[pts {test}] NVMe host facts not read: {error}")
        return
    rec = facts.as_record(TEST_START)
    run.ledger.append(records.NvmeFacts(
        test=test, moment=TEST_START, facts=json_safe(rec["facts"]), files=rec["files"],
        refused=rec["refused"], folder=str(folder.relative_to(run.ledger.path.parent))))
    stats = facts.values.get("fdp_stats")
    if stats is not None:       # read_all read log 22h of the namespace's Endurance Group
        endgid = facts.values["id_ns"]["endgid"]
        _fdp_group[key] = endgid
        run.ledger.append(records.FdpStatistics(
            test=test, when=TEST_START, round=None, endgid=endgid, stats=stats,
            file=f"{FOLDER}/{test}/{facts.files['fdp_stats']}"))


def _read_stats(run, test: str, when: str, round_no: int | None, folder: Path, endgid: int,
                runner: Callable | None) -> None:
    out = folder / f"log-22h_{_tag(when)}.bin"
    base = runner or commands.run

    def with_group(argv, **kwargs):       # the Endurance Group in LSI, as read_all reads it
        return base([*argv, f"--lsi={endgid}"], **kwargs)
    stats = error = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        stats = json_safe(fdp_stats(read_bytes(nvme.controller_path(run.device.path),
                                               LOG_FDP_STATS, FDP_STATS_SIZE, out,
                                               run=with_group, log_file=run.commands_log)))
    except Exception as exc:       # noqa: BLE001 - never fails the run: kept, said
        error = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
        run.write(f"[pts {test}] FDP statistics (log 22h) not read {when}: {error}")
    run.ledger.append(records.FdpStatistics(
        test=test, when=when, round=round_no, endgid=endgid, stats=stats,
        file=None if stats is None else f"{FOLDER}/{test}/{out.name}", error=error))
