"""The option handling of a several-device session, as plain functions: the devices given,
their labels (item ids, output prefixes), the command line of each device's child run, and
where a child says its run folder is."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

# Options of the parent session that a child run must not get (it gets its own --device;
# the parent writes the junit XML of the whole session from the children's reports).
PARENT_ONLY_WITH_VALUE = ("--device", "--junitxml", "--junit-xml", "--inventory", "--only",
                          "--resume",      # several --resume: each child gets its own
                          "--serve",       # the session's one dashboard covers its drives
                          "--render-jobs")   # the children get the session's slots instead
PARENT_ONLY_FLAGS = ("--skip-refused-devices",)
CHILD_LOG_PLUGIN = "pts.session.childlog"


class MultiDeviceError(Exception):
    """The devices given cannot make one session; the message says why and the fix."""


def given_devices(option) -> list[str]:
    """--device given zero, one or several times (None, a string or a list)."""
    if not option:
        return []
    return [option] if isinstance(option, str) else list(option)


def labels(devices: Sequence[str]) -> list[str]:
    """A short, unique name per device for item ids and output prefixes: the device node's
    name (/dev/loop5 -> loop5, /dev/disk/by-id/nvme-X -> nvme-X), 'emulated:...' as given,
    a device on another host as HOST[:SSHPORT]:NAME (ssh://root@dut1/dev/sda -> dut1:sda);
    a name given again gets #2, #3 (two emulated SSDs of the same size and profile)."""
    out: list[str] = []
    for d in devices:
        base = d if d.startswith("emulated") else (os.path.basename(d.rstrip("/")) or d)
        if m := re.match(r"ssh://(?:[^@/]+@)?([^/]+)/", d):    # another host: HOST:NAME
            base = f"{m[1]}:{base}"
        name, n = base, 1
        while name in out:
            n += 1
            name = f"{base}#{n}"
        out.append(name)
    return out


def check_combination(devices: Sequence[str], resume: str | None) -> None:
    if resume and len(devices) > 1:
        raise MultiDeviceError(
            f"--resume continues one run on the device its run folder names; "
            f"{len(devices)} --device were given. Give the run folders alone: pytest pts/ "
            "--resume RUN_DIR [--resume RUN_DIR ...] --destructive")


def child_args(parent_args: Sequence[str], device: str, log_file: Path,
               own: Sequence[str] = ()) -> list[str]:
    """The parent's own command-line arguments for one device's child: every --device and
    the parent-only options removed, then the drive's own options (--inventory: they come
    after the session's, so they win), --device DEVICE and the report-log plugin."""
    out: list[str] = []
    skip_next = False
    for arg in parent_args:
        if skip_next:
            skip_next = False
            continue
        if arg in PARENT_ONLY_WITH_VALUE:
            skip_next = True
            continue
        if arg in PARENT_ONLY_FLAGS or any(arg.startswith(o + "=")
                                           for o in PARENT_ONLY_WITH_VALUE):
            continue
        out.append(arg)
    return [*out, *own, "--device", device, "-p", CHILD_LOG_PLUGIN, "--pts-child-log",
            str(log_file)]


_REPORT = re.compile(r"^PTS report: (?P<pdf>.+\.pdf)\s*$")
_KEPT = re.compile(r"data kept in (?P<folder>.+?); retry with")


def run_folder_from_output(lines: Sequence[str]) -> Path | None:
    """The run folder a child run printed at its end (the single-device run's "PTS report:
    FOLDER/report.pdf" line, or "data kept in FOLDER" when the PDF failed)."""
    for line in reversed(lines):
        if m := _REPORT.match(line):
            return Path(m["pdf"]).parent
        if m := _KEPT.search(line):
            return Path(m["folder"])
    return None


_ESTIMATE = re.compile(r"estimated duration of this run: best (\d+):(\d\d):(\d\d), worst "
                       r"(\d+):(\d\d):(\d\d)")


def estimate_from_output(lines: Sequence[str]) -> tuple[int, int] | None:
    """The (best, worst) seconds of a child's --dry-run (pts.procedure.plan.total_lines)."""
    for line in reversed(lines):
        if m := _ESTIMATE.search(line):
            n = [int(x) for x in m.groups()]
            return n[0] * 3600 + n[1] * 60 + n[2], n[3] * 3600 + n[4] * 60 + n[5]
    return None
