"""Running the suite as a user does, `python -m pytest pts/ ...`, on a loop device in
/dev/shm (tests.helpers.loop_device) or an emulated SSD, and reading back what it left: the
run folder, its ledger, the PDF's text.

The command is spelled here only (pts_argv); tests run it with run_suite() (to its end),
start_suite() (to act while it runs: kill it, pull the device), run_pts() (on a device,
destructive, returning what the run folder holds) or kill_and_resume() (kill -9 at a moment
the ledger shows, then --resume)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pts.results.ledger import read_ledger
from tests.helpers import REPO, pdf_text


@dataclass
class PtsRun:
    proc: subprocess.CompletedProcess
    wall: float
    folder: Path
    records: list[dict]
    notes: list[str]
    run_json: dict

    def of_type(self, kind: str, test: str | None = None) -> list[dict]:
        return [r for r in self.records if r["type"] == kind
                and (test is None or r.get("test") == test)]

    def pdf_text(self) -> str:
        return pdf_text(self.folder / "report.pdf", layout=True)


IOPS = "pts/suite/test_iops.py"       # target= of the IOPS test alone


def pts_argv(*args: str, target: str = "pts/", python: str | Path = sys.executable) -> list[str]:
    """`python -m pytest pts/ -p no:cacheprovider ARGS` (no pytest cache in the checkout).
    `target` narrows it to one test module (IOPS); `python` is the venv's interpreter (the
    QEMU guest runs the host's)."""
    return [str(python), "-m", "pytest", target, "-p", "no:cacheprovider", *args]


def run_suite(*args: str, target: str = "pts/",
              timeout: float = 120) -> subprocess.CompletedProcess:
    """The suite run to its end from the checkout: exit code, stdout and stderr (text)."""
    return subprocess.run(pts_argv(*args, target=target), cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


def start_suite(*args: str, target: str = "pts/") -> subprocess.Popen:
    """The suite started from the checkout, stdout and stderr together in .stdout (text)."""
    return subprocess.Popen(pts_argv(*args, target=target), cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def run_pts(device: str, reports: Path, *args: str, target: str = "pts/",
            timeout: float = 900) -> PtsRun:
    """The suite on `device` (--destructive), its one run folder in `reports` read back."""
    start = time.monotonic()
    proc = run_suite("--device", device, "--destructive", "--reports-dir", str(reports), *args,
                     target=target, timeout=timeout)
    wall = time.monotonic() - start
    print(proc.stdout[-3000:], proc.stderr[-2000:])
    found = list(reports.glob("*/*/run.json"))
    assert len(found) == 1, proc.stdout + proc.stderr
    folder = found[0].parent
    records, notes = read_ledger(folder / "ledger.jsonl")
    return PtsRun(proc, wall, folder, [r.data for r in records], notes,
                  json.loads(found[0].read_text()))


def kill_and_resume(device: str, reports: Path, args: list[str], target: str,
                    ready: Callable[[Path], bool],
                    limit: float = 300) -> tuple[Path, list[dict], str]:
    """Start the suite on `device`, kill -9 it once `ready(run folder)` is true, wait until
    no process of the run (its fio) is left, then `--resume` it to its end: (the run
    folder, the ledger's records when it was killed, the resumed run's output). The resumed
    run may end steady or not (exit 0 or 1): both are real outcomes."""
    first = start_suite("--device", device, "--destructive", "--reports-dir", str(reports),
                        *args, target=target)
    folder = None
    try:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and folder is None:
            found = list(reports.glob("*/*/ledger.jsonl"))
            if found and ready(found[0].parent):
                folder = found[0].parent
            assert first.poll() is None, first.communicate()[0][-3000:]
            time.sleep(0.01)
        assert folder is not None, f"the run was not ready within {limit:.0f} s"
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    killed = [r.data for r in read_ledger(folder / "ledger.jsonl")[0]]
    # fio got SIGTERM from the kernel when the suite died (PR_SET_PDEATHSIG); it ends its
    # jobs and exits, which takes a moment on a loaded machine.
    deadline = time.monotonic() + 30
    while subprocess.run(["pgrep", "-f", str(folder)], capture_output=True).returncode == 0:
        assert time.monotonic() < deadline, "a fio of the killed run is still running"
        time.sleep(0.1)
    second = start_suite("--resume", str(folder), "--destructive", target=target)
    out, _ = second.communicate(timeout=600)
    assert second.returncode in (0, 1), out[-3000:]
    return folder, killed, out


def spec_variant(folder: Path, replacements: dict[str, str],
                 base: str = "pts-2.0.2-enterprise") -> Path:
    """A copy of specs/BASE.toml with exact-text `replacements` (each must occur), for a
    test that shortens a spec value the suite then declares (e.g. HIR's preconditioning
    round intervals): its path, for --spec."""
    text = (REPO / "specs" / f"{base}.toml").read_text(encoding="utf-8")
    for old, new in replacements.items():
        assert old in text, f"{old!r} is not in specs/{base}.toml"
        text = text.replace(old, new)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{base}-variant.toml"
    path.write_text(text, encoding="utf-8")
    return path
