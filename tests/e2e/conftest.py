"""Fixtures shared by e2e test modules: the real browser (issue 22: Debian's headless
Chromium through chromium-driver, by path, nothing downloaded) and the one boot of the QEMU
guest (tests/support/qemu_guest.py) that test_qemu_e2e.py, test_qemu_sata_sas.py and
test_qemu_holders.py read.

The guest's boot (its 10 suite runs under TCG, 3-6 minutes) starts in a thread when the
session's tests are collected, if any of them reads the guest, and runs while the other
tests run: the guest's QEMU and the host's device runs, which mostly wait on the clock (1 s
test points), share the two cores instead of taking turns (issue 31 §1). The guest tests
then wait for its end. PTS_TEST_GUEST=in-turn boots it when its first test comes instead;
PTS_TEST_GUEST=reuse:SHARE boots nothing and gives the tests a finished boot's share folder
again (its runs' outputs, kept by qemu_guest.boot), to re-run their assertions in seconds.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

import pytest

from tests.support.screens import chromium

EARLY = pytest.StashKey["EarlyGuest"]()


@pytest.fixture(scope="module")
def browser():
    driver = chromium()
    try:
        yield driver
    finally:
        driver.quit()


class EarlyGuest:
    """The guest's boot, run in a thread: the emulated SSD behind its NVMe drive, then
    tests.support.qemu_guest.boot. QEMU dies with this process (PR_SET_PDEATHSIG)."""

    def __init__(self, share):
        self.share, self.inst, self.guest, self.error = share, None, None, None
        self.started = time.monotonic()
        # What the thread imports is imported here, before it starts: two threads importing
        # at once can see a half-run module (the emulator daemon's watchdog thread died of
        # it: dataclasses read a half-run typing, 8 in 40 daemons; pts/emulate/daemon.py)
        from pts import emulate  # noqa: F401
        from tests.support import qemu_guest  # noqa: F401
        from tests.support.guest import image  # noqa: F401
        with contextlib.suppress(ImportError):      # mfusepy: its absence is the boot's to say
            from pts.emulate import fusefs  # noqa: F401
        self.thread = threading.Thread(target=self._boot, name="qemu-guest", daemon=True)
        self.thread.start()

    def _boot(self) -> None:
        from pts import emulate
        from tests.support import qemu_guest
        from tests.support.guest import default_cache_dir, ensure_image
        try:
            image = ensure_image(default_cache_dir())
            self.inst = emulate.start(qemu_guest.DISK_BYTES, profile="default")
            self.guest = qemu_guest.boot(image, self.inst, self.share)
        except BaseException as exc:       # raised again in the test that reads the guest
            self.error = exc

    def result(self):
        from tests.support.qemu_guest import GUEST_TIMEOUT
        # QEMU is killed at GUEST_TIMEOUT; the image and the emulated SSD come before it
        self.thread.join(GUEST_TIMEOUT + 300)
        assert not self.thread.is_alive(), "the QEMU guest's boot thread did not end"
        waited = time.monotonic() - self.started
        print(f"\nQEMU guest booted in the background: ready {waited:.0f} s after the "
              "session's collection")
        if self.error is not None:
            raise self.error
        return self.guest

    def stop(self) -> None:
        """At the session's end. A boot still running (the session stopped early) is left
        to end with this process: QEMU gets SIGKILL when its thread dies, the emulated SSD's
        daemon cleans up when its owner (this process) is gone."""
        from pts import emulate
        if self.inst is not None and not self.thread.is_alive():
            emulate.stop(self.inst.device)


def pytest_collection_finish(session):
    if os.environ.get("PTS_TEST_GUEST", "early") != "early" or session.config.getoption(
            "collectonly") or not any("guest" in getattr(item, "fixturenames", ())
                                      for item in session.items):
        return
    share = session.config._tmp_path_factory.mktemp("guest-share")
    session.config.stash[EARLY] = EarlyGuest(share)


def pytest_sessionfinish(session):
    early = session.config.stash.get(EARLY, None)
    if early is not None:
        early.stop()


@pytest.fixture(scope="session")
def guest(request, tmp_path_factory):
    """The QEMU guest booted once per session, its script run (tests/support/qemu_guest.py):
    the boot started at collection (EarlyGuest), or here (PTS_TEST_GUEST=in-turn)."""
    reuse = os.environ.get("PTS_TEST_GUEST", "")
    if reuse.startswith("reuse:"):    # a finished boot's share folder, read again
        from tests.support.qemu_guest import load
        yield load(Path(reuse.removeprefix("reuse:")))
        return
    early = request.config.stash.get(EARLY, None)
    if early is not None:             # stopped at the session's end (pytest_sessionfinish)
        yield early.result()
        return
    in_turn = EarlyGuest(tmp_path_factory.mktemp("guest-share"))
    try:
        yield in_turn.result()
    finally:
        in_turn.stop()
