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
import os, sys, time, types
from pts.tools import slots
folder, out, release = sys.argv[1], sys.argv[2], sys.argv[3]
def poll_sleep(seconds):                     # each poll of a waiting process, counted
    with open(out + ".polls", "a") as fh:
        fh.write(".")
    time.sleep(seconds)
slots.time, slots.POLL_SECONDS = types.SimpleNamespace(sleep=poll_sleep), 0.01
def waiting(count):
    with open(out + ".waited", "a") as fh:
        fh.write(str(count) + "\\n")
with slots.held(folder, waiting) as slot:
    start = time.monotonic()
    open(out + ".holding", "w").close()
    while not os.path.exists(release):       # hold the slot until the test releases it
        time.sleep(0.01)
    open(out, "w").write(f"{start} {time.monotonic()} {slot[0]} {slot[1]}")
"""


def wait_for(condition, what: str, limit: float = 60) -> None:
    """Until condition() holds; the limit only stops a test that would hang."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"not within {limit} s: {what}"
        time.sleep(0.02)


def most_at_once(spans: list[tuple[float, ...]]) -> int:
    """The most spans open at one moment (CLOCK_MONOTONIC is one clock for every process;
    an end sorts before a start at the same instant)."""
    edges = sorted([(s[0], 1) for s in spans] + [(s[1], -1) for s in spans])
    now = peak = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


@pytest.mark.parametrize("cap", [1, 2])
def test_never_more_than_n_hold_a_slot(tmp_path, cap):
    """Four processes, none letting go of its slot until every one holds a slot or has been
    told to wait and has tried the slots again three times: exactly `cap` hold one and the
    others wait, told once (however slowly each started); once released, the waiters take
    the slots in turn, never more than `cap` at once."""
    folder, n, release = slots.make(tmp_path / "slots", cap), 4, tmp_path / "release"
    procs = [subprocess.Popen([sys.executable, "-c", HOLDER, str(folder),
                               str(tmp_path / f"h{i}"), str(release)]) for i in range(n)]
    try:
        def state(suffix: str) -> set[int]:
            return {i for i in range(n) if (tmp_path / f"h{i}{suffix}").exists()}
        wait_for(lambda: state(".holding") | state(".waited") == set(range(n)),
                 "every holder holds a slot or waits")
        waiters = set(range(n)) - state(".holding")
        assert len(state(".holding")) == cap and state(".waited") == waiters
        wait_for(lambda: all(len((tmp_path / f"h{i}.polls").read_text()) >= 3
                             for i in waiters), "every waiter polled three times")
        release.touch()
        for p in procs:
            assert p.wait(timeout=60) == 0
    finally:
        release.touch()
        for p in procs:
            p.kill()
            p.wait()
    spans = [tuple(float(x) for x in (tmp_path / f"h{i}").read_text().split()) for i in range(n)]
    assert most_at_once(spans) == cap
    assert {int(s[3]) for s in spans} == {cap} and {int(s[2]) for s in spans} == \
        set(range(1, cap + 1))
    waited = list(tmp_path.glob("h*.waited"))      # told once however often it polled
    assert len(waited) == n - cap and all(p.read_text() == f"{cap}\n" for p in waited)


def test_a_killed_holders_slot_is_free_again(tmp_path):
    folder = slots.make(tmp_path / "slots", 1)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder), str(tmp_path / "k"),
                               str(tmp_path / "never-released")])
    try:
        wait_for(lambda: _held(folder), "the holder holds the slot")
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
