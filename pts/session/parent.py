"""The parent session of `pytest pts/ --device A --device B ...` (see pts.session): the
checks of every device at start-up, one item per device and PTS test, the child runs in
parallel, their outcomes mirrored, and the comparison at the end.

pts.session.plugin calls configure() first thing in its pytest_configure; with one --device (or
none) it only turns the option back into the string the single-device run has always had,
and everything else is as before.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from pts.cli import remote
from pts.procedure import plan
from pts.report import console
from pts.results.resume import stopped
from pts.session import children as kids
from pts.session import gate, inventory, replay, resumed
from pts.session.devices import (
    MultiDeviceError,
    check_combination,
    child_args,
    estimate_from_output,
    given_devices,
    labels,
    run_folder_from_output,
)
from pts.session.outcome import write_comparison
from pts.tools import slots

ACTIVE = pytest.StashKey[object]()


def inventory_drives(config: pytest.Config) -> list[inventory.Drive] | None:
    """The drives --inventory (and --only) select; None without --inventory."""
    opt = config.option
    if not opt.inventory:
        if opt.only:
            raise pytest.UsageError("--only selects drives of an --inventory FILE; without "
                                    "one, give the drives to test as --device options")
        return None
    if given_devices(opt.device):
        raise pytest.UsageError("--inventory and --device: give the drives in one place "
                                "(the inventory file, or --device options)")
    try:
        drives = inventory.load(opt.inventory).select(opt.only)
    except inventory.InventoryError as exc:
        raise pytest.UsageError(str(exc)) from None
    if not drives:
        raise pytest.UsageError(f"{opt.inventory}: no drive selected (--only {opt.only})")
    return drives


def resume_drives(config: pytest.Config, folders: list[str]) -> list[inventory.Drive]:
    """Several --resume: a drive per run folder, on the device its run.json names."""
    if config.option.inventory or given_devices(config.option.device):
        raise pytest.UsageError("several --resume: each run goes on on the device its run "
                                "folder names; give the run folders alone, without --device "
                                "or --inventory")
    try:
        return resumed.drives(folders, config.option)
    except MultiDeviceError as exc:
        raise pytest.UsageError(str(exc)) from None


def configure(config: pytest.Config, settings_of: Callable, check_capacity: Callable,
              check_reports_dir: Callable) -> bool:
    """True if this is a several-device session (this module's plugin then runs it)."""
    resumes = given_devices(config.option.resume)     # None, one or several, as --device
    drives = resume_drives(config, resumes) if len(resumes) > 1 else inventory_drives(config)
    devices = [d.given for d in drives] if drives else given_devices(config.option.device)
    if len(devices) <= 1:
        config.option.device = devices[0] if devices else None
        config.option.resume = resumes[0] if resumes else None
        if drives:                  # one drive: the single-device run, with its options
            vars(config.option).update(drives[0].options)
        return False
    by_given = {d.given: d for d in drives or ()}
    try:
        if len(resumes) == 1:
            check_combination(devices, resumes[0])
        render_jobs(config.option.render_jobs)
    except MultiDeviceError as exc:
        raise pytest.UsageError(str(exc)) from None
    settings = _settings(config, settings_of, devices, by_given)
    opt = config.option

    def own(given: str, dest: str):             # a drive's own option, or the session's
        drive = by_given.get(given)
        return drive.option(dest, getattr(opt, dest)) if drive else getattr(opt, dest)

    for d in devices:
        if why := remote.refusal(d, round_mode=own(d, "round_mode"), purge=own(d, "purge")):
            raise pytest.UsageError(why)
    names = [d.label for d in drives] if drives else labels(devices)
    checked = gate.check_all(devices, names, destructive=config.option.destructive,
                             check_capacity=lambda dev: check_capacity(dev, settings),
                             resolver=lambda given: remote.resolve_given(
                                 given, own(given, "ssh_config"), own(given, "fio_port")))
    refused = [c for c in checked if not c.accepted]
    if refused and (not config.option.skip_refused_devices
                    or len(refused) == len(checked)):
        gate.release_all(checked)
        raise pytest.UsageError(gate.refusal(checked))
    if config.option.destructive and not config.option.dry_run:
        try:
            check_reports_dir(settings.reports_dir)
        except pytest.UsageError:
            gate.release_all(checked)
            raise
    config.stash[ACTIVE] = plugin = MultiSession(config, checked, settings, drives or [])
    config.pluginmanager.register(plugin, "pts-multi-device")
    return True


def _settings(config: pytest.Config, settings_of: Callable, devices: list[str],
              by_given: dict) -> object:
    """The session's settings, checked for every drive with its own --inventory options
    (its spec decides which reduced matrices are valid): bad options are a usage error
    naming the drive, as with one drive. Returns the first drive's."""
    opt, first = vars(config.option), None
    for given in devices:
        drive = by_given.get(given)
        saved = {k: opt.get(k) for k in (drive.options if drive else {})} | \
            {"resume": opt.get("resume")}
        # each drive as its own run sees it: its options, its device and its one --resume
        # folder (several --resume: a resumed run's workload file is checked per drive)
        opt.update(drive.options if drive else {}, device=given,
                   resume=drive.resume if drive else None)
        try:
            settings = settings_of(config)
        except pytest.UsageError as exc:
            raise pytest.UsageError(f"[{drive.label}] {exc}" if drive else str(exc)) from None
        finally:
            opt.update(saved, device=None)
        first = first or settings
    return first


def render_jobs(option: int | None) -> int:
    """--render-jobs, or the machine's cores (a render is CPU-bound: one core each)."""
    if option is None:
        return os.cpu_count() or 1
    if option < 1:
        raise MultiDeviceError(f"--render-jobs {option}: give at least 1 (how many of the "
                               "session's reports render at once)")
    return option


class MultiSession:
    def __init__(self, config: pytest.Config, checked: list[gate.Checked], settings,
                 drives: list[inventory.Drive]):
        self.config, self.checked, self.settings = config, checked, settings
        self.drives = {d.label: d for d in drives}      # --inventory: label -> drive
        self.children: list[kids.Child] = []
        self.lines: list[str] = []

    # -------------------------------------------------------------- collection
    @pytest.fixture(autouse=True)
    def pts_device(self, request):
        """The device (label) of an item of a several-device session."""
        return getattr(request, "param", None)

    @pytest.hookimpl(trylast=True)
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "pts_device" in metafunc.fixturenames:
            names = [c.label for c in self.checked]
            metafunc.parametrize("pts_device", names, ids=names)

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        s = self.settings
        out = [f"snia-pts: {len(self.checked)} devices in one session, one child run each, "
               f"in parallel (spec {s.spec.name}, point {s.point_seconds} s, max rounds "
               f"{s.max_rounds}, purge {s.purge}, destructive {s.destructive}, reports "
               f"{s.reports_dir})"]
        out += inventory_lines(self.config.option, self.drives.values())
        for c in self.checked:
            if not c.accepted:
                out.append(f"snia-pts device [{c.label}] {c.given}: REFUSED, left out "
                           f"(--skip-refused-devices): {c.refused}")
            elif c.device is None:
                out.append(f"snia-pts device [{c.label}] {c.given}: emulated SSD, made by "
                           "its own run")
            else:
                i = c.device.identity
                out.append(f"snia-pts device [{c.label}] {c.device.path} ({c.given}) model="
                           f"{i.model!r} serial={i.serial!r} firmware={i.firmware!r}, "
                           f"{c.device.capacity_bytes:,} bytes"
                           + (", locked" if c.lock is not None else ""))
        return out

    # -------------------------------------------------------------- running
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session):
        config = self.config
        if config.option.collectonly or (session.testsfailed and not
                                         config.option.continue_on_collection_errors):
            return None            # pytest's own loop: --collect-only, collection errors
        for c in self.checked:
            if not c.accepted:
                for item in session.items:
                    if replay._device(item) == c.label:
                        replay.report_missing(config, item, "skipped",
                                              f"[{c.label}] {c.given} refused: {c.refused}")
        accepted = [c for c in self.checked if c.accepted]
        ours = [i for i in session.items if replay._device(i) in {c.label for c in accepted}]
        if not ours:
            return True
        logs = Path(tempfile.mkdtemp(prefix="pts-multi-"))
        rendering = {slots.ENV: str(slots.make(logs / "render-slots",
                                               render_jobs(config.option.render_jobs)))}
        args = config.invocation_params.args
        for n, c in enumerate(accepted):
            log = logs / f"{n}.jsonl"
            self.children.append(kids.Child(
                c.label, c.given,
                [sys.executable, "-m", "pytest",
                 *child_args(args, c.given, log, self._own_args(c.label))], log,
                lock_fd=c.lock.fd if c.lock is not None else None, env=rendering))
        write = _writer(config)

        def finished(child: kids.Child) -> None:
            reports = replay.read_reports(config, child.log_file)
            replay.replay(config, session.items, child.label, reports, child.returncode,
                          child.lines)

        try:
            kids.run_all(self.children, config.invocation_params.dir, write, finished)
        finally:
            gate.release_all(self.checked)
            shutil.rmtree(logs, ignore_errors=True)     # the children's logs were replayed
        if config.option.destructive and not config.option.dry_run:
            self.lines = write_comparison(self.settings.reports_dir, self.checked,
                                          self._folders(),
                                          {k.label: k.returncode for k in self.children})
        return True

    def _own_args(self, label: str) -> list[str]:
        drive = self.drives.get(label)
        return drive.child_args() if drive else []

    def _folders(self) -> dict[str, Path | None]:
        return {c.label: run_folder_from_output(c.lines) for c in self.children}

    # -------------------------------------------------------------- the end
    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.children and all(c.accepted for c in self.checked):
            return                  # nothing was started (--collect-only, no item)
        folders = self._folders()
        for c in self.checked:
            child = next((k for k in self.children if k.label == c.label), None)
            if not c.accepted:
                line = f"REFUSED, not run: {c.refused}"
            elif child is None or child.returncode is None:
                line = "not run"
            else:
                line = (f"exit status {child.returncode} "
                        f"({replay.EXIT_NAMES.get(child.returncode, 'killed or crashed')}), "
                        f"run folder {folders.get(c.label) or '(none)'}")
            terminalreporter.write_line(f"snia-pts [{c.label}] {c.given}: {line}")
        for line in self.lines + self._estimate_lines() + self._resume_lines(folders):
            terminalreporter.write_line(line)

    def _resume_lines(self, folders: dict[str, Path | None]) -> list[str]:
        """One command that goes on with every run of the session that stopped."""
        if self.config.option.dry_run:
            return []
        stop = [f for c in self.checked if (f := folders.get(c.label)) is not None
                and (f / "ledger.jsonl").exists() and stopped(f)]
        if not stop:
            return []
        return ["snia-pts to go on with the runs that stopped, after their last completed "
                "round: pytest pts/ " + " ".join(f"--resume {f}" for f in stop)
                + " --destructive"]

    def _estimate_lines(self) -> list[str]:
        """--dry-run: the session's estimate, its drives running in parallel."""
        if not self.config.option.dry_run:
            return []
        found = {k.label: e for k in self.children if (e := estimate_from_output(k.lines))}
        if not found:
            return []
        best = max(found, key=lambda label: found[label][0])
        worst = max(found, key=lambda label: found[label][1])
        return [f"snia-pts estimated duration of the session ({len(found)} drives in "
                f"parallel; purges not included): best {plan.hms(found[best][0])} (the "
                f"longest: [{best}]), worst {plan.hms(found[worst][1])} ([{worst}])"]

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        gate.release_all(self.checked)


def inventory_lines(opt, drives) -> list[str]:
    """The plan per host and drive of an --inventory session (header and --dry-run)."""
    drives = list(drives)
    if not drives:
        return []
    if drives[0].resume is not None:
        return [f"snia-pts resuming {len(drives)} runs, each with its own settings:"] + [
            f"snia-pts   [{d.label}] {d.given}: --resume {d.resume}" for d in drives]
    out = [f"snia-pts inventory {opt.inventory}: {len(drives)} drive(s)"
           + (f" selected by --only {opt.only}" if opt.only else "")]
    for host in dict.fromkeys(d.host for d in drives):
        out.append(f"snia-pts host {host}:")
        for d in (d for d in drives if d.host == host):
            own = ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in d.options.items())
            out.append(f"snia-pts   [{d.label}] {d.given}"
                       + (f" (groups {', '.join(d.groups)})" if d.groups else "")
                       + f": {own or 'the session options'}")
    return out


def _writer(config: pytest.Config):
    """Lines to the terminal while pytest captures output (as pts.session.plugin's progress)."""
    return console.terminal_writer(config)
