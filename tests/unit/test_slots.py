"""The cap on concurrent report renders of a several-device session (pts.tools.slots,
`--render-jobs N`): real processes holding flock slots; never more than N at once, a waiter
told once, a killed holder's slot freed by the kernel."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pts.tools import slots

HOLDER = """
import sys, time
from pts.tools import slots
folder, out, hold = sys.argv[1], sys.argv[2], float(sys.argv[3])
def waiting(count):
    open(out + ".waited", "w").write(str(count))
with slots.held(folder, waiting) as slot:
    start = time.monotonic()
    time.sleep(hold)
    open(out, "w").write(f"{start} {time.monotonic()} {slot[0]} {slot[1]}")
"""


def run_holders(folder: Path, tmp: Path, n: int, hold: float) -> list[tuple[float, ...]]:
    procs = [subprocess.Popen([sys.executable, "-c", HOLDER, str(folder), str(tmp / f"h{i}"),
                               str(hold)]) for i in range(n)]
    for p in procs:
        assert p.wait(timeout=60) == 0
    return [tuple(float(x) for x in (tmp / f"h{i}").read_text().split()) for i in range(n)]


def most_at_once(spans: list[tuple[float, ...]]) -> int:
    edges = sorted([(s[0], 1) for s in spans] + [(s[1], -1) for s in spans])
    now = peak = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


@pytest.mark.parametrize("cap", [1, 2])
def test_never_more_than_n_hold_a_slot(tmp_path, cap):
    folder = slots.make(tmp_path / "slots", cap)
    spans = run_holders(folder, tmp_path, 4, 0.6)
    assert most_at_once(spans) == cap
    assert {int(s[3]) for s in spans} == {cap} and {int(s[2]) for s in spans} == \
        set(range(1, cap + 1))
    waited = [p for p in tmp_path.glob("h*.waited")]
    assert len(waited) == 4 - cap and all(p.read_text() == str(cap) for p in waited)


def test_a_killed_holders_slot_is_free_again(tmp_path):
    folder = slots.make(tmp_path / "slots", 1)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder), str(tmp_path / "k"),
                               "60"])
    try:
        deadline = time.monotonic() + 30
        while not _held(folder) and time.monotonic() < deadline:    # until it holds it
            time.sleep(0.05)
        assert _held(folder)
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
        with slots.held(folder) as slot:
            assert slot == (1, 1)
    finally:
        holder.kill()
        holder.wait()


def _held(folder: Path) -> bool:
    import fcntl
    fd = os.open(folder / "slot-0", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def test_no_folder_no_slot_and_bad_counts(tmp_path):
    with slots.held(None) as slot:
        assert slot is None
    with pytest.raises(ValueError, match="at least 1, not 0"):
        slots.make(tmp_path / "s", 0)
    with pytest.raises(FileNotFoundError, match="no slot files in"):
        with slots.held(tmp_path):
            pass
