"""Fixtures and requirement checks of the project's own tests.

The tests are grouped by kind:

    tests/unit/     pure logic: spec and settings, steady-state maths, parsing of recorded
                    tool output (tests/data/), the CLI and plugin where no device is needed
    tests/e2e/      loop devices, emulated SSDs, real fio, the suite run on a block device,
                    the QEMU guest (tests/support/guest/)
    tests/report/   report data, PDF rendering, the report CLI
    tests/compare/, tests/qualify/, tests/export/, tests/serve/   those commands' own tests

Shared helpers are in tests/support/ (helpers.py: paths, loop devices, the recorded-output
fake of external tools; ptsrun.py: the suite run as a user runs it; runfactory.py: synthetic
run folders, in synthetic/); this file keeps fixtures and hooks only.

Tiers. The fast tier is everything not marked slow: unit, report, serve, dry runs; no device
runs. A test is slow when it says so, or when it runs I/O on a device (it needs fio, FUSE or
the QEMU guest: pytest_collection_modifyitems below marks it), so a new device test cannot
land in the fast tier by accident. CI (.ci/run, README command 2) runs the fast tier first and
stops at its first failure, then the slow tier.

    pytest tests -m "not slow"      the fast tier (about 5 minutes on 2 cores)
    pytest tests -m slow            the slow tier as CI runs it (on two workers:
                                    -n 2 --dist loadfile --no-loadscope-reorder, see below)
    pytest tests --require-all      everything, in one go
    pytest tests -m qemu            the QEMU guest tests alone (one boot, 3 to 6 minutes)

Deadlines. Every test has one (pytest-timeout): DEADLINES seconds by tier, fixtures
included, or its own @pytest.mark.timeout(N) for the few long ones (the demo, the kill
campaign), so a hung loop fails that test instead of
eating CI's 90 minutes. The deadline is set here, not in pyproject.toml, so that it applies
to the project's tests only, never to a PTS run (`pytest pts/ ...` runs for hours).

Tests that need root or a tool say so with @pytest.mark.needs("root", "fio", ...). An unmet
requirement skips with a readable reason on a developer machine, but FAILS under
--require-all or CI=true: CI installs everything, so a skip there would hide a broken set-up.
A test that starts an emulated SSD (pts.emulate: FUSE + loop) says needs("fusermount3",
"/dev/fuse", "mfusepy", "losetup"); "fusermount3" alone brings the other FUSE two (IMPLIED),
and tests/unit/test_emulated_needs.py finds a test that reaches one without them.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil

import pytest

from tests.support.helpers import (
    BINARIES,
    REPORT_EPOCH,
    TOOLS,
    loop_device,
    sweep_scratch,
    unmet_binaries,
)

# Reports rendered by the tests (and by the suite runs they start) carry this Report Date.
os.environ.setdefault("SOURCE_DATE_EPOCH", REPORT_EPOCH)


def pytest_addoption(parser):
    parser.addoption("--require-all", action="store_true",
                     help="fail (instead of skip) tests whose requirements (root, tools) are "
                          "unmet; implied by CI=true")


# seconds a project test may take, fixtures included (the first test of a module pays for
# its module-scoped run), unless it carries its own @pytest.mark.timeout: several times the
# slowest seen on a 2-core machine, far below CI's 90 minutes. Fast: a test takes seconds
# (the slowest, a module rendering the reference run's report, ~20 s under load). Slow: a
# module's suite run up to ~4 min (DIRTH/CBW, HIR, the lab). QEMU: the one boot runs 10
# suite runs in the guest, 170-340 s seen (12 runs took 374-649 s, over 1200 s beside a loaded
# host; its own limit, GUEST_TIMEOUT, is 2400 s).
DEADLINES = {"fast": 180, "slow": 900, "qemu": 3000}   # qemu: above GUEST_TIMEOUT
# requirements that make a test a device run (the slow tier)
DEVICE_RUN = {"fio", "fusermount3", "mfusepy"}
# requirements that bring others: fusermount3 mounts and unmounts FUSE file systems, and the
# one this project mounts is the emulated SSD's (mfusepy over libfuse3, through /dev/fuse), so
# a test that names it needs those too (a missing one would otherwise fail inside the run)
IMPLIED = {"fusermount3": ("/dev/fuse", "mfusepy")}


def requirements(item) -> list[str]:
    """The test's needs markers' requirements, each with those it implies, in order."""
    out: list[str] = []
    for m in item.iter_markers("needs"):
        for a in m.args:
            out += [r for r in (a, *IMPLIED.get(a, ())) if r not in out]
    return out


# Two workers for the slow tier (`-n 2 --dist loadfile --no-loadscope-reorder`, as CI runs it;
# docs/development.md): a
# device run mostly waits on the clock (1 s points), so two modules run side by side. A file
# stays on one worker (its module-scoped suite run runs once); the files that read the QEMU
# guest go to ONE worker together (pytest_xdist_make_scheduler below: one boot, in turn, by
# that worker: PTS_TEST_GUEST is set for workers; booted at collection, every worker would
# boot one) and come first, so that the boot (6-8 min, the longest single thing) starts at
# once. Not xdist's own `loadgroup`: with pytest 9.2 its group suffix (item._nodeid) is lost
# (pytest keeps the node id in _id now), so every test became its own group.
GUEST_GROUP = "qemu-guest"
GUEST_FILES = ("tests/e2e/test_qemu_e2e.py", "tests/e2e/test_qemu_sata_sas.py",
               "tests/e2e/test_qemu_holders.py")
# The slow tier's longest files (CI of stop 37, seconds: demo 212, DIRTH/CBW 190, HIR 167,
# XSR 131, IOPS 110, WSAT 101, DIRTH resume 91, lab 83, compare 82) start right after the
# guest's, so that no long one is left to run alone at the end.
LONG_FIRST = ("test_demo.py", "test_dirth_cbw_integration.py", "test_hir_integration.py",
              "test_xsr_integration.py", "test_iops_integration.py", "test_wsat_integration.py",
              "test_dirth_cbw_resume.py", "test_lab_hosts.py", "test_compare_e2e.py")


def _file(item) -> str:
    return item.nodeid.split("::", 1)[0]


def _reads_guest(item) -> bool:
    return "guest" in getattr(item, "fixturenames", ()) or bool(item.get_closest_marker("qemu"))


def _start_order(item) -> int:
    if _file(item) in GUEST_FILES:
        return 0
    name = _file(item).rsplit("/", 1)[-1]
    return 1 + LONG_FIRST.index(name) if name in LONG_FIRST else 1 + len(LONG_FIRST)


@pytest.hookimpl(tryfirst=True)     # before -m "not slow" deselects by the marks set here
def pytest_collection_modifyitems(config, items):
    for item in items:
        needs = {a for m in item.iter_markers("needs") for a in m.args}
        if needs & DEVICE_RUN or item.get_closest_marker("qemu"):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("timeout") is None:
            tier = "qemu" if item.get_closest_marker("qemu") else \
                "slow" if item.get_closest_marker("slow") else "fast"
            item.add_marker(pytest.mark.timeout(DEADLINES[tier]))
    if stray := sorted({_file(i) for i in items if _reads_guest(i)} - set(GUEST_FILES)):
        raise pytest.UsageError(f"{stray} read the QEMU guest: add them to GUEST_FILES in "
                                "tests/conftest.py (one worker boots the guest for all)")
    if hasattr(config, "workerinput"):       # the same order on every worker (xdist checks)
        items.sort(key=_start_order)


def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile, with the guest's files as one unit (see GUEST_FILES)."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class GuestFilesTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return GUEST_GROUP if path in GUEST_FILES else path

    return GuestFilesTogether(config, log)


def pytest_configure(config):
    if hasattr(config, "workerinput"):       # an xdist worker: the guest boots in turn
        os.environ.setdefault("PTS_TEST_GUEST", "in-turn")
    elif os.geteuid() == 0:                  # a dead session's loop devices and guest disks
        config.stash[SWEPT] = sweep_scratch()
    config.addinivalue_line("markers", "qemu: boots a QEMU (TCG) guest with an emulated NVMe "
                            "drive (tests/support/guest); minutes, not seconds")
    config.addinivalue_line("markers", "slow: the slow tier: a device run (needs fio, FUSE or the "
                            "QEMU guest: marked automatically) or more than about 10 s; "
                            'pytest tests -m "not slow" leaves them out')
    strict = config.getoption("--require-all") or os.environ.get("CI") in ("true", "1")
    if not config.pluginmanager.hasplugin("timeout"):
        message = ("pytest-timeout is not installed: the project's tests would run without "
                   "deadlines (pip install -e '.[test]')")
        if strict:
            raise pytest.UsageError(message)
        config.issue_config_time_warning(pytest.PytestConfigWarning(message), stacklevel=2)


SWEPT = pytest.StashKey[list]()


def pytest_report_header(config):
    if swept := config.stash.get(SWEPT, None):
        return [f"removed {len(swept)} scratch file(s) of dead test sessions (and their loop "
                f"devices): {', '.join(p.name for p in swept)}"]
    return None


def _unmet(requirement: str) -> str | None:
    if requirement == "root":
        return None if os.geteuid() == 0 else "needs root (loop devices, raw block I/O)"
    if requirement == "root-on-block-device":
        st = os.stat("/")
        ok = os.path.exists(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
        return None if ok else "needs / on a block device (not overlay/tmpfs)"
    if requirement == "/dev/fuse":
        return None if os.path.exists("/dev/fuse") else "needs /dev/fuse (FUSE in the kernel)"
    if requirement == "mfusepy":
        try:
            importlib.import_module("mfusepy")     # loads libfuse3 too
        except (ImportError, OSError) as exc:      # OSError: libfuse3 missing
            return f"needs mfusepy with libfuse3 (pip install -e '.[emulate]'): {exc}"
        return None
    if requirement == "selenium":
        try:
            importlib.import_module("selenium.webdriver")
        except ImportError as exc:
            return f"needs selenium (pip install -e '.[test]'): {exc}"
        return None
    if requirement in BINARIES:       # what the test runs, by path (helpers.BINARIES)
        return unmet_binaries(requirement)
    if requirement in TOOLS:
        return None if shutil.which(requirement) else \
            f"needs {requirement} (apt-get install {TOOLS[requirement]})"
    raise ValueError(f"unknown requirement {requirement!r}")


def pytest_runtest_setup(item):
    reasons = [r for a in requirements(item) if (r := _unmet(a))]
    if not reasons:
        return
    strict = item.config.getoption("--require-all") or os.environ.get("CI") in ("true", "1")
    message = "; ".join(reasons)
    if strict:
        pytest.fail(f"requirement not met (and --require-all/CI set): {message}")
    pytest.skip(message)


@pytest.fixture
def make_loop():
    """Factory: a loop device over a sparse file in /dev/shm (tests.support.helpers.loop_device).
    Detaches only what it made, at the end of the test."""
    with contextlib.ExitStack() as made:
        def make(size: int = 64 << 20, sector: int = 512, partitioned: bool = False) -> str:
            return made.enter_context(loop_device(size, sector, partitioned))

        yield make


@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL 15 server (tests/support/postgres.py), started at its first use in
    this test process (tests/index, the dashboard on a lab's database), stopped and removed
    at the end of the session."""
    from tests.support import postgres
    with postgres.server() as server:
        yield server
