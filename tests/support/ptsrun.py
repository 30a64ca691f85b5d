"""Running the suite as a user does, `python -m pytest pts/ ...`, on a loop device in
/dev/shm (tests.support.helpers.loop_device) or an emulated SSD, and reading back what it left: the
run folder, its ledger, the PDF's text.

The command is spelled here only (pts_argv); tests run it with run_suite() (to its end),
start_suite() (to act while it runs: kill it, pull the device), run_pts() (on a device,
destructive, returning what the run folder holds) or kill_and_resume() (kill -9 at a moment
the ledger shows, then --resume). A run's verdicts are checked with check_outcomes(): each
round-based test's outcome recomputed from its recorded rounds (expected_outcomes), never
"steady or not steady"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pts.config.spec import DEFAULT_SPEC, SteadyStateRule, load_spec
from pts.procedure import steady_state
from pts.results import records
from pts.results.ledger import read_ledger
from pts.tools import commands
from tests.support.helpers import REPO, pdf_text


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
    QEMU guest runs the host's).

    The host ceiling (issue 33 §1, about 3 s before each test's purge; 230 s of a CI run) is
    off unless ARGS name --host-ceiling: the runs that test it (test_iops_integration, and the
    demo, which runs as README command 1 does) ask for it."""
    ceiling = [] if any(a.startswith("--host-ceiling") for a in args) else [
        "--host-ceiling", "off"]
    return [str(python), "-m", "pytest", target, "-p", "no:cacheprovider", *ceiling, *args]


def _ends_with_this_process(ignored: tuple[signal.Signals, ...] = ()):
    """In the suite's child before exec: SIGTERM from the kernel when this test process dies
    (PR_SET_PDEATHSIG; a killed test worker left its suite runs going on their devices, and
    they then held the devices' locks), and the signals it is to inherit as ignored."""
    def child() -> None:
        commands.set_parent_death_signal(signal.SIGTERM)
        for sig in ignored:
            signal.signal(sig, signal.SIG_IGN)
    return child


def run_suite(*args: str, target: str = "pts/",
              timeout: float = 120) -> subprocess.CompletedProcess:
    """The suite run to its end from the checkout: exit code, stdout and stderr (text)."""
    return subprocess.run(pts_argv(*args, target=target), cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, preexec_fn=_ends_with_this_process())


def start_suite(*args: str, target: str = "pts/",
                ignored: tuple[signal.Signals, ...] = (),
                env: dict[str, str] | None = None) -> subprocess.Popen:
    """The suite started from the checkout, stdout and stderr together in .stdout (text).
    `ignored`: signals it inherits as ignored (SIG_IGN), as a shell script's `&` without
    job control starts it with SIGINT and SIGQUIT ignored; `env`: added to its environment."""
    # its own process group, which stop_suite kills (the tools it starts have their own)
    return subprocess.Popen(pts_argv(*args, target=target), cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, **(env or {})},
                            preexec_fn=_ends_with_this_process(ignored), start_new_session=True)


def stop_suite(proc: subprocess.Popen) -> None:
    """kill -9 the suite's process group if it still runs (a test's deadline fired, or an
    assertion, while it ran): the suite does not outlive the test; its fio then gets
    SIGTERM from the kernel (PR_SET_PDEATHSIG) and its gates end without their suite."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


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
    run exits 0 exactly when every round-based test ended as its recorded rounds pass
    (expected_outcomes; a run without one, XSR, must pass)."""
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
        stop_suite(first)
    killed = [r.data for r in read_ledger(folder / "ledger.jsonl")[0]]
    # fio got SIGTERM from the kernel when the suite died (PR_SET_PDEATHSIG); it ends its
    # jobs and exits, which takes a moment on a loaded machine.
    deadline = time.monotonic() + 30
    while subprocess.run(["pgrep", "-f", str(folder)], capture_output=True).returncode == 0:
        assert time.monotonic() < deadline, "a fio of the killed run is still running"
        time.sleep(0.1)
    second = start_suite("--resume", str(folder), "--destructive", target=target)
    try:
        out, _ = second.communicate(timeout=600)
    finally:
        stop_suite(second)
    expected = expected_outcomes([r.data for r in read_ledger(folder / "ledger.jsonl")[0]],
                                 spec_rule(folder))
    assert second.returncode == (0 if all(e.passed for e in expected.values()) else 1), \
        out[-3000:]
    return folder, killed, out


def fio_job(folder: Path, point: dict) -> dict:
    """The job of a point's raw fio JSON, as fio wrote it into the run folder (the suite runs
    fio with group_reporting: one job however many threads). Tests compare the ledger's
    figures with it, never with the ledger's own derived values."""
    doc = json.loads((folder / point["raw"]).read_text())
    assert len(doc["jobs"]) == 1, (point["raw"], len(doc["jobs"]))
    return doc["jobs"][0]


def fio_mix(job: dict) -> str:
    """The R/W mix fio ran, from its job options ("65/35")."""
    opts = job["job options"]
    read = {"randread": 100, "randwrite": 0, "read": 100, "write": 0}.get(opts["rw"])
    read = int(opts["rwmixread"]) if read is None else read
    return f"{read}/{100 - read}"


def spec_variant(folder: Path, replacements: dict[str, str],
                 base: str = "pts-2.0.2-enterprise", count: int = -1) -> Path:
    """A copy of specs/BASE.toml with exact-text `replacements` (each must occur; the first
    `count` occurrences replaced, -1: all), for a test that shortens a spec value the suite
    then declares (e.g. HIR's preconditioning round intervals) or breaks one key the loader
    must refuse (count=1): its path, for --spec."""
    text = (REPO / "specs" / f"{base}.toml").read_text(encoding="utf-8")
    for old, new in replacements.items():
        assert old in text, f"{old!r} is not in specs/{base}.toml"
        text = text.replace(old, new, count)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{base}-variant.toml"
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------- verdicts

@dataclass(frozen=True)
class Expected:
    """A round-based test's outcome as its recorded rounds give it (expected_outcomes)."""
    test: str
    title: str
    status: str                  # steady / not_steady (HIR: complete / not_steady)
    rounds: int
    steady_round: int | None
    window: list[int]

    @property
    def passed(self) -> bool:
        return self.status in (records.STEADY, records.COMPLETE)

    def report_status(self) -> str:
        """The report's status line of the test (pts/stored/data.py, per test)."""
        span = f"(window {self.window[0]}..{self.window[1]})"
        if self.status == records.STEADY:
            return f"Steady state reached at round {self.steady_round} {span}"
        if self.status == records.NOT_STEADY:
            return f"STEADY STATE NOT ACHIEVED after {self.rounds} rounds {span}"
        return ""     # HIR complete: its wording is the HIR page's own


def spec_rule(folder: Path) -> SteadyStateRule:
    """The steady-state rule of the spec the run in `folder` names (run.json spec.name),
    loaded from specs/ with the project's spec loader: never the window and limits the run
    recorded, so that a run which recorded (or judged with) other ones is caught."""
    name = json.loads((folder / "run.json").read_text())["spec"]["name"]
    return load_spec(name).steady_state


RULE_KEYS = ("window_rounds", "max_data_excursion", "max_slope_excursion")


def _first_steady(tracking: dict[int, dict], rule: SteadyStateRule) -> int | None:
    """The first round whose window is steady for every tracking variable (the round loop
    stops there), judged with the spec's window and limits."""
    window = rule.window_rounds
    limits = {k: getattr(rule, k) for k in ("max_data_excursion", "max_slope_excursion")}
    labels = list(tracking[1])
    for n in range(window, len(tracking) + 1):
        series = {k: [tracking[r][k] for r in range(1, n + 1)] for k in labels}
        if steady_state.check_all(series, list(range(1, n + 1)), window=window, **limits)[0]:
            return n
    return None


# Tests whose round is one pass with no steady state: complete once it is recorded
# (rwsw-replay: every capture step once, pts/testdefs/rwsw_replay.py).
ONE_PASS = {"rwsw-replay"}


def expected_outcomes(recs: list[dict],
                      rule: SteadyStateRule | None = None) -> dict[str, Expected]:
    """Each round-based test's outcome recomputed from its ledger records: the tracking
    values of its round records (a round redone after --resume: the later record) judged
    round after round with the steady-state maths (pts.procedure.steady_state) and the
    spec's window and limits (`rule`: spec_rule(run folder); none given: the default
    spec's, for records made up in a test); steady at the first steady window, else not
    steady after the max rounds of its test_start (the operator's --max-rounds). Each
    test_start must have recorded the spec's window and limits. HIR is "complete" when its
    preconditioning rounds were steady."""
    rule = rule or load_spec(DEFAULT_SPEC).steady_state
    starts = {r["test"]: r for r in recs if r["type"] == "test_start"}
    tracking: dict[str, dict[int, dict]] = {}
    for r in recs:
        if r["type"] == "round":
            tracking.setdefault(r["test"], {})[r["round"]] = r["tracking"]
    out = {}
    for test, rounds in tracking.items():
        assert sorted(rounds) == list(range(1, len(rounds) + 1)), (test, sorted(rounds))
        if test in ONE_PASS:
            out[test] = Expected(test, starts[test]["title"], records.COMPLETE, len(rounds),
                                 None, [1, len(rounds)])
            continue
        params = starts[test]["parameters"]
        recorded = {k: params[k] for k in RULE_KEYS}
        assert recorded == {k: getattr(rule, k) for k in RULE_KEYS}, \
            f"{test} recorded the steady-state rule {recorded}, the spec's is {rule}"
        n, w = _first_steady(rounds, rule), rule.window_rounds
        if n is None:
            last = int(params["max_rounds"])
            status, first = records.NOT_STEADY, max(1, last - w + 1)
        else:
            last, first = n, n - w + 1
            status = records.COMPLETE if test == "hir" else records.STEADY
        out[test] = Expected(test, starts[test]["title"], status, last, n, [first, last])
    return out


def check_outcomes(folder: Path, recs: list[dict] | None = None) -> dict[str, Expected]:
    """Every round-based test of the run in `folder` ended as its recorded rounds give it:
    its last test_end (status, rounds, steady round, window) and the report's status line
    and verdict reason. Returns the expected outcomes (tests compare exit codes with
    them)."""
    recs = recs if recs is not None else [r.data for r in read_ledger(folder / "ledger.jsonl")[0]]
    expected = expected_outcomes(recs, spec_rule(folder))
    assert expected, "no round-based test in this run"
    text = pdf_text(folder / "report.pdf")
    for test, exp in expected.items():
        end = [r for r in recs if r["type"] == "test_end" and r["test"] == test][-1]
        assert (end["status"], end["rounds"], end["steady_round"], end["window"]) == \
            (exp.status, exp.rounds, exp.steady_round, exp.window), (test, end, exp)
        if exp.report_status():
            assert exp.report_status() in text, (test, exp.report_status())
        failed = f"{exp.title}: STEADY STATE NOT ACHIEVED"
        assert (failed in text) == (exp.status == records.NOT_STEADY), (test, failed)
    return expected
