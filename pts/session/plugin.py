"""pytest hooks and options of snia-pts (loaded by the root conftest.py).

Without --device every PTS test is skipped with a reason. With --device the options are
checked and the device resolved at start-up, so a bad value stops the session before
anything runs; writing additionally needs --destructive.
"""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

import pytest

from pts.cli import remote
from pts.config.report_info import MISSING_OPERATOR
from pts.config.settings import Settings
from pts.config.spec import SpecError, available_specs, load_spec
from pts.device import leftovers, safety
from pts.device.identity import BlockDevice, DeviceError, active_range_bytes
from pts.device.lock import DeviceLock
from pts.device.platform_device import capture as capture_platform
from pts.device.platform_device import check_poll
from pts.device.remote import remote_platform
from pts.emulate import session as emulated
from pts.index import live as live_index
from pts.procedure.properties import junit_properties
from pts.report import console
from pts.results import health_records
from pts.results.resume import ResumeError, ResumeState, stopped
from pts.run import Run
from pts.serve import background
from pts.session import engine_check, options, power_check
from pts.session import parent as multi
from pts.testdefs import registry
from pts.tools import slots

SETTINGS = pytest.StashKey[Settings]()
DEVICE = pytest.StashKey[BlockDevice]()
REPORTS = pytest.StashKey[list]()
LOCK = pytest.StashKey[DeviceLock]()
RESUME = pytest.StashKey[ResumeState]()
SIGNATURES = pytest.StashKey[safety.Signatures]()
SERVE = pytest.StashKey[object]()        # --serve: the Bound (port, auth), then the Background
INDEX_SAY = pytest.StashKey[object]()    # the live index's lines: a copy of the terminal's fd 2


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add(parser)


def _resume_options(config: pytest.Config) -> None:
    """--resume: the run's own settings (pts.session.options.replay)."""
    try:
        state = ResumeState.load(config.option.resume)
    except ResumeError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[RESUME] = state
    options.replay(config, state)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "pts(name): a PTS test of pts.testdefs.registry; its "
                            "pts_outcome fixture runs it")
    config.stash[REPORTS] = []
    _bind_dashboard(config)
    if multi.configure(config, options.settings, _check_capacity, _check_reports_dir):
        # Ctrl-C honoured however the parent was started (see _honour_interrupts); its
        # SIGTERM is handled by pts.session.children.run_all
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _start_dashboard(config)
        return          # several --device: pts.session.parent runs one child per device
    if config.option.resume:
        _resume_options(config)
    if not config.option.device:
        options.check_workload(config.option.workload)   # refused even with nothing to run
        return
    config.stash[SETTINGS] = options.settings(config)
    if why := remote.refusal(config.option.device, round_mode=config.option.round_mode,
                             purge=config.option.purge):
        raise pytest.UsageError(why)
    try:
        if emulated.is_emulated(config.option.device):
            dev = emulated.start_for_session(config, config.option.device)
        else:
            dev = remote.resolve_given(config.option.device, config.option.ssh_config,
                                       config.option.fio_port)
        _check_capacity(dev, config.stash[SETTINGS])
        # --power: each source answers; not given: the drive's own report where it has one
        # (a --resume without it reads the stopped run's sources: pts.procedure.resume)
        config.stash[SETTINGS] = power_check.check(
            config.stash[SETTINGS], dev, _writer(config),
            given=config.option.power is not None or RESUME in config.stash)
        if RESUME in config.stash:
            config.stash[RESUME].check_device(dev)
            config.stash[RESUME].check_data_units(
                dev, health_records.resume_counters(dev, config.stash[RESUME]))
        if config.option.destructive:
            if dev.remote is None:     # what dead runs left: fio, gates, ceiling devices
                resumed = config.stash[RESUME].folder if RESUME in config.stash else None
                leftovers.sweep(_writer(config), resumed,
                                resumed / "commands.log" if resumed else None)
            safety.check_writable(dev, destructive=True)
            config.stash[LOCK] = DeviceLock(dev).acquire()
    except (DeviceError, emulated.EmulatedDeviceError) as exc:
        emulated.stop_for_session(config)
        raise pytest.UsageError(str(exc)) from None
    config.stash[DEVICE] = dev
    if config.option.destructive and not config.option.dry_run:   # a run that will write
        # After the device checks: a refused device leaves no trace, not even a folder.
        _check_reports_dir(config.stash[SETTINGS].reports_dir)
    if config.option.destructive:
        config.stash[SIGNATURES] = safety.signatures(dev)
    _honour_interrupts()
    _start_dashboard(config)
    if config.option.destructive and not config.option.dry_run and \
            live_index.target_for(config.stash[SETTINGS].reports_dir) is not None:
        # fd 2 is the terminal now; pytest redirects it per test later (as --serve's log)
        config.stash[INDEX_SAY] = os.fdopen(os.dup(2), "w", buffering=1)


def _index_say(config: pytest.Config):
    """How the live index's thread reaches the terminal: its copy of fd 2 (pytest's capture
    is switched by the main thread only)."""
    return lambda line: print(line, file=config.stash[INDEX_SAY])


def _honour_interrupts() -> None:
    """Ctrl-C (SIGINT) and SIGTERM take the interrupt path: fio is stopped, the interruption
    is recorded and a partial report is rendered; a second signal stops at once. SIGINT's
    handler is installed explicitly: a shell script that starts the suite with `&` (no job
    control) starts it with SIGINT ignored, Python then installs no KeyboardInterrupt
    handler, and `kill -INT` was silently ignored (the run went on to its next round). The
    tools the suite starts get the default disposition back at exec (a handled signal is
    reset to SIG_DFL; an ignored one would stay ignored)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)


def _bind_dashboard(config: pytest.Config) -> None:
    """--serve: take the port first, so that a port in use stops the session before any
    device is touched."""
    opt = config.option
    if not opt.serve or opt.dry_run or opt.collectonly:
        return
    try:
        config.stash[SERVE] = background.bind(opt.serve, opt.serve_auth_file)
    except background.ServeError as exc:
        raise pytest.UsageError(str(exc)) from None


def _start_dashboard(config: pytest.Config) -> None:
    if SERVE in config.stash:
        config.stash[SERVE] = background.start(config.stash[SERVE],
                                               Path(config.option.reports_dir))


def _interrupt(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def _check_reports_dir(reports: Path) -> None:
    """Results must be storable before anything is written to the device."""
    try:
        reports.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=reports, prefix=".pts-write-check-"):
            pass
    except OSError as exc:
        raise pytest.UsageError(f"--reports-dir {reports}: cannot store results there "
                                f"({exc.strerror or exc}). Choose a writable directory.") \
            from None


def _check_capacity(dev: BlockDevice, settings: Settings) -> None:
    """Every thread needs room for at least one of the largest I/Os; --io-poll needs the
    device's poll queues (checked before anything is written)."""
    spec = settings.spec
    largest = max([*settings.iops_block_sizes, spec.wipc.block_size])
    safety.check_capacity(
        dev, active_range_bytes(dev, spec.common.active_range_pct),
        spec.common.thread_count * largest,
        f"{spec.common.thread_count} threads of {largest // 1024} KiB I/O")
    if settings.io_poll:        # polled completion needs the device's poll queues
        check_poll(dev.host, dev.kname, dev.given)


def pytest_unconfigure(config: pytest.Config) -> None:
    served = config.stash.get(SERVE, None)
    if isinstance(served, background.Background):
        served.stop()
    elif served is not None:            # bound, but the session stopped before it started
        served.close()
    if LOCK in config.stash:
        config.stash[LOCK].release()
    if INDEX_SAY in config.stash:
        config.stash[INDEX_SAY].close()
    emulated.stop_for_session(config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    served = config.stash.get(SERVE, None)
    dashboard = [f"snia-pts dashboard: {served.url} (--serve; read-only, until this run "
                 "ends)"] if isinstance(served, background.Background) else []
    if multi.ACTIVE in config.stash:
        return dashboard    # and its own header lines (pts.session.parent)
    if DEVICE not in config.stash:
        return [f"snia-pts: no --device given; PTS tests will be skipped "
                f"(specs: {', '.join(available_specs())})"]
    dev, s = config.stash[DEVICE], config.stash[SETTINGS]
    ident = dev.identity
    return dashboard + [
        f"snia-pts device: {dev.path} ({dev.given}) model={ident.model!r} "
        f"serial={ident.serial!r} firmware={ident.firmware!r} [{ident.source}]",
        f"snia-pts device: {dev.capacity_bytes:,} bytes, logical sector {dev.logical_sector} B, "
        f"physical sector {dev.physical_sector} B, transport {dev.transport}"
        + (f", EMULATED ({dev.profile})" if dev.emulated else ""),
        f"snia-pts settings: spec {s.spec.name}, point {s.point_seconds} s, max rounds "
        f"{s.max_rounds}, purge {s.purge}, destructive {s.destructive}, reports {s.reports_dir}",
        *[f"snia-pts deviation: {d}" for d in s.deviations()],
        *([f"snia-pts deviation: {MISSING_OPERATOR}"] if not s.report_info.operator else []),
        *(config.stash[SIGNATURES].header_lines(dev.path) if SIGNATURES in config.stash
          else []),
        *[f"snia-pts platform WARNING: {w}"
          for w in (capture_platform(dev.kname, dev.transport) if dev.remote is None
                    else remote_platform(dev))["warnings"]],
    ]


def _writer(config: pytest.Config):
    """Progress lines go to the terminal even while pytest captures test output."""
    return console.terminal_writer(config)


@pytest.fixture(scope="session")
def pts_run(request: pytest.FixtureRequest):
    """The run of this session: run folder, ledger, fio. Skips without --device or
    --destructive; renders report.pdf when the session's PTS tests are done (not with
    --no-report: the run's data only, rendered later by python -m pts report)."""
    config = request.config
    if DEVICE not in config.stash:
        pytest.skip("no --device given: PTS tests need a device under test, e.g. "
                    "pytest pts/ --device /dev/nvme0n1 --destructive")
    dev = config.stash[DEVICE]
    if not config.stash[SETTINGS].destructive:
        pytest.skip(f"PTS tests purge and overwrite {dev.given}: add --destructive to allow it")
    run = Run(config.stash[SETTINGS], dev, _writer(config), config.stash.get(RESUME, None))
    # the results index, when one is set for these reports: kept level as the ledger grows
    indexed = live_index.start(run.folder, config.stash[SETTINGS].reports_dir,
                               _index_say(config)) if INDEX_SAY in config.stash else None
    try:
        yield run
    finally:
        run.close()
        if indexed is not None:
            config.stash[REPORTS].extend(indexed.stop())
        config.stash[REPORTS].append(
            f"PTS report: not rendered (--no-report); make it with: python -m pts report "
            f"{run.folder}" if config.option.no_report else _render(run.folder, _writer(config)))
        config.stash[REPORTS].extend(console.warning_lines(run.folder))
        if stopped(run.folder):
            config.stash[REPORTS].append(
                f"PTS run stopped before it finished; to continue after the last completed "
                f"round: pytest pts/ --resume {run.folder} --destructive")


def _render(folder: Path, write) -> str:
    """The report rendered; in a several-device session, in one of its --render-jobs slots
    (pts.tools.slots: the session's children render N at a time)."""
    def waiting(count: int) -> None:
        write(f"PTS report: waiting for a render slot ({count} at once in this session, "
              "--render-jobs)")

    try:
        from pts.report import render

        with slots.held(os.environ.get(slots.ENV), waiting) as slot:
            if slot is not None:
                write(f"PTS report: rendering in render slot {slot[0]} of {slot[1]}")
            return f"PTS report: {render(folder)}"
    except Exception as exc:  # the data is safe on disk; say how to retry
        return (f"PTS report could not be rendered ({type(exc).__name__}: {exc}); data kept "
                f"in {folder}; retry with: python -m pts report {folder}")


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    for line in config.stash.get(REPORTS, []):
        terminalreporter.write_line(line)


def pytest_itemcollected(item: pytest.Item) -> None:
    """A PTS item is selected by its test's name as the docs write it (`-k rwsw-wsat`
    selects test_rwsw_wsat), as a variant's id already is (`-k throughput-128k`)."""
    marker = item.get_closest_marker("pts")
    if marker is not None and marker.args:
        item.extra_keyword_matches.add(str(marker.args[0]))


@pytest.hookimpl(tryfirst=True)    # before pts.suite.datasheet places requirements after tests
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """PTS items in the registry's order (IOPS, Throughput, Latency, WSAT, DIRTH, CBW, ...),
    not pytest's file order; other items keep their places."""
    order = {name: n for n, name in enumerate(registry.TESTS)}
    slots = [n for n, item in enumerate(items) if item.get_closest_marker("pts")]
    ours = sorted((items[n] for n in slots),
                  key=lambda item: order.get(item.get_closest_marker("pts").args[0], len(order)))
    for n, item in zip(slots, ours, strict=True):
        items[n] = item


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A PTS test with variants (Throughput: one per block size of the run's --spec) gets
    one item per variant, named by its id (test_throughput[throughput-128k])."""
    marker = metafunc.definition.get_closest_marker("pts")
    if marker is None or "pts_variant" not in metafunc.fixturenames:
        return
    variants = registry.get(marker.args[0]).variants
    if variants is None:
        return
    try:
        found = variants(load_spec(metafunc.config.option.spec))
    except SpecError:
        found = []     # without --device a bad --spec is not an error; nothing to run
    metafunc.parametrize("pts_variant", [v for _, v in found], ids=[i for i, _ in found])


@pytest.fixture
def pts_variant():
    """The variant of a PTS test item (None for a test without variants)."""
    return None


@pytest.fixture
def pts_outcome(request: pytest.FixtureRequest, pts_run, pts_variant):
    """The measurement of the item's PTS test (purge, preconditioning, rounds). Whatever
    stops it — a tool, the device, the purge, Ctrl-C — is a pytest ERROR of the item, never
    a spec FAIL: only the test function's assertion on the outcome is the spec verdict."""
    marker = request.node.get_closest_marker("pts")
    if marker is None:
        raise pytest.UsageError(f"{request.node.nodeid} takes pts_outcome but has no "
                                "@pytest.mark.pts(name)")
    outcome = registry.get(marker.args[0]).run(pts_run, pts_variant)
    # junit properties (as record_property does): the key figures for CI systems
    request.node.user_properties.extend(junit_properties(outcome, pts_run.folder))
    return outcome


def pytest_collection_finish(session: pytest.Session) -> None:
    """What the selected tests' plans refuse stops the session now, before the first test
    purges (a run) or plans (--dry-run): io_uring with a depth this fio would round up."""
    config = session.config
    if DEVICE not in config.stash or config.option.collectonly or not (
            config.option.destructive or config.option.dry_run):
        return
    if why := engine_check.refusal(config.stash[SETTINGS], config.stash[DEVICE],
                                   session.items):
        raise pytest.UsageError(why)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session):
    """--dry-run: print the plans instead of running anything."""
    config = session.config
    if not config.option.dry_run:
        return None
    if DEVICE not in config.stash:
        raise pytest.UsageError("--dry-run needs --device (the plan depends on the device)")
    engine_check.dry_run(config.stash[SETTINGS], config.stash[DEVICE], session.items,
                         _writer(config), config.option.destructive)
    return True
