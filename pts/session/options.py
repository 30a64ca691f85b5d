"""The snia-pts command-line options (the rows of pts.config.option_table), the Settings made
from them and the --resume replay of a run's own (pts.session.plugin)."""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
from pathlib import Path

import pytest

from pts.cli import remote
from pts.config import option_table
from pts.config.report_info import ReportInfoError, make_report_info
from pts.config.settings import Settings, SettingsError, make_settings
from pts.config.spec import DEFAULT_SPEC, SpecError, load_spec
from pts.emulate import session as emulated
from pts.results import records
from pts.results.resume import NOT_TAKEN, ResumeError, ResumeState
from pts.session import resumed
from pts.workload import atw

# The namespace attribute that holds the names of the options given (GivenAction)
GIVEN = "pts_given"
# What the table's help texts name from layers above it (pts.config.option_table)
HELP_FACTS = {"emulated_size": emulated.DEFAULT_SIZE, "emulated_profile": emulated.DEFAULT_PROFILE}


def _noting(base: type[argparse.Action]) -> type[argparse.Action]:
    """argparse's action `base` that also notes its option as given (Settings.given: an
    explicit value is told apart from the default, as pytest-timeout's get_params does)."""
    class Noting(base):                                  # type: ignore[valid-type, misc]
        def __call__(self, parser, namespace, values, option_string=None):
            super().__call__(parser, namespace, values, option_string)
            given = set(getattr(namespace, GIVEN, None) or ())
            setattr(namespace, GIVEN, given | {self.dest})
    return Noting


ACTIONS = {"store": _noting(argparse._StoreAction),
           "append": _noting(argparse._AppendAction),
           "store_true": _noting(argparse._StoreTrueAction),
           "store_false": _noting(argparse._StoreFalseAction)}


def add(parser: pytest.Parser) -> None:
    """The snia-pts command-line options, one per row of pts.config.option_table (their help
    is the reference; docs/running.md lists them)."""
    g = parser.getgroup("snia-pts", "SNIA PTS compliance tests (pytest pts/ --device DEV)")
    for row in option_table.ROWS:
        g.addoption(row.flag, **_argparse(row))


def _argparse(row: option_table.Option) -> dict:
    """add_argument's keywords for a row."""
    out: dict = {"action": ACTIONS[row.action],
                 "help": row.help.format(**HELP_FACTS) if "{" in row.help else row.help}
    if row.action in ("store", "append"):
        out.update(metavar=row.metavar, default=row.default)
        if row.type is not None:
            out["type"] = row.type
        if row.choices is not None:
            out.update(choices=row.choices, metavar=None)
    elif row.default is not None:
        out["default"] = row.default
    if row.dest:
        out["dest"] = row.dest
    return out


def given(config: pytest.Config) -> frozenset[str]:
    """The options given for this run (by pytest's name): on the command line, or replayed
    from the run resumed (replay)."""
    return frozenset(getattr(config.option, GIVEN, None) or ())


def replay(config: pytest.Config, state: ResumeState) -> None:
    """--resume: the run's own settings (run.json) replace the command line's, so that the
    rounds before and after the interruption are measured the same way; so do the options
    it was given (run.json `options_given`; for a run from before that key: those whose
    stored value is not what the option left out stores)."""
    stored = state.options
    for key, value in resumed.replayed(stored, config.option).items():
        setattr(config.option, key, value)
    recorded = state.run_json.get("options_given")
    noted = set(recorded) if recorded is not None else _differing(stored)
    here = {k for k in given(config) if k in (*NOT_TAKEN, "resume")}
    setattr(config.option, GIVEN, here | (noted - set(NOT_TAKEN)))
    if not config.option.device:
        config.option.device = state.run_json.get("device", {}).get("given")


def _differing(stored: dict) -> set[str]:
    """The stored options whose value differs from what the option left out would store."""
    try:
        unset = make_settings(load_spec(stored.get("spec") or DEFAULT_SPEC)).as_dict()
    except (SpecError, SettingsError):
        return set()                       # settings() says what is wrong with the run's
    return {k for k, v in stored.items() if k in unset and unset[k] != v}


def settings(config: pytest.Config) -> Settings:
    """Settings from the options; a bad value is a usage error naming it."""
    opt = config.option
    try:
        spec = load_spec(opt.spec)
        values = {row.name: getattr(opt, row.name) for row in option_table.ROWS if row.setting}
        values["round_mode"] = opt.round_mode or remote.default_round_mode(opt.device)
        settings = make_settings(spec, given=given(config), **values,
                                 report_info=make_report_info(
                                     operator=opt.operator, auditor=opt.auditor,
                                     sponsor=opt.sponsor, file=opt.report_info))
        power = option_table.BY_FLAG["--power"]
        settings = dataclasses.replace(settings, power=power.check(power.flag, opt.power,
                                                                   spec, {}))
        return with_workload(settings, opt.workload,
                             ResumeState.load(opt.resume) if opt.resume else None)
    except (SpecError, SettingsError, ReportInfoError, atw.WorkloadError, ResumeError) as exc:
        raise pytest.UsageError(str(exc)) from None


def check_workload(path: str | None) -> None:
    """A bad --workload file is a usage error naming file and key, device or not."""
    try:
        if path:
            atw.load(Path(path))
    except atw.WorkloadError as exc:
        raise pytest.UsageError(str(exc)) from None


def with_workload(settings: Settings, path: str | None,
                  resumed: ResumeState | None = None) -> Settings:
    """`settings` with the --workload file loaded and checked (WorkloadError names the file
    and the key); its absolute path is kept in run.json, so --resume loads the same file,
    and a resumed run (`resumed`) must find it unchanged (check_resumed_workload)."""
    if not path:
        return settings
    found = Path(path).absolute()
    if resumed is not None:
        check_resumed_workload(resumed, found)
    return dataclasses.replace(settings, workload=atw.load(found), workload_path=str(found))


def recorded_workload(state: ResumeState) -> tuple[str, str] | None:
    """(sha256, test) of the ATW the stopped run's last RWSW test_start recorded, if any."""
    for r in reversed(state.records):
        if isinstance(r, records.TestStart) and (r.parameters or {}).get("atw"):
            return r.parameters["atw"].get("sha256"), r.test
    return None


def check_resumed_workload(state: ResumeState, path: Path) -> None:
    """A resumed run's rounds must apply the workload its rounds before the stop applied:
    a workload file that changed or went missing since is refused, naming both sha256 and
    the fix, before anything is written."""
    recorded = recorded_workload(state)
    if recorded is None or not recorded[0]:
        return                     # no RWSW test had started: nothing applied it yet
    sha, test = recorded
    try:
        now = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        now, what = None, f"cannot be read ({exc.strerror})"
    else:
        what = "has changed since the run started"
    if now == sha:
        return
    raise atw.WorkloadError(
        f"--resume {state.folder}: the workload file {path} {what}: the run's {test} "
        f"applied the ATW with sha256 {sha}, the file now has "
        f"{'none' if now is None else 'sha256 ' + now}. The rounds after the stop must apply "
        f"the same workload as those before: put the run's file (sha256 {sha}) back at "
        f"{path}, or start a new run without --resume. Nothing was written.")
