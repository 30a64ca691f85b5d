"""--power at run time (issue 51 §3, §5): one recorder per source for the run; each round's
fio run (a `round_power` record) and each of its points' windows (a `point_power` record)
stored per source.

The recorders start with the run's first round (each source's `power_source` record then,
once) and stop with the run (Run.close, which the session calls whatever ends it: Ctrl-C, an
exception; a meter's command also gets a parent-death signal). Every source is read just
before a round's fio starts and just after it ends, and on its own thread in between; a
point's window is its fio I/O's start and end (Unix seconds from fio's logs, put on the
monotonic clock the samples are aligned by), never a count of samples. A source that fails
mid-run is said once by its recorder and leaves gaps in the windows; it never stops the run.

The tests without rounds of points (WSAT's one fio run and its samples, HIR's wait states, XSR's
access groups) store `phase_power` records: `phase` around a fio run (read at its edges) and
`span` for a part of one whose Unix edges come from fio's logs (a WSAT sample).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator, Sequence

from pts.config.power_option import PowerSpecError
from pts.power import drive
from pts.power import spec as power_spec
from pts.power.source import PowerSourceError, Recorder
from pts.procedure import resume
from pts.results import records
from pts.run import Run

# The name a source is stored under: a password file's path is no business of the results.
_PASSWORD_FILE = re.compile(r",password-file=[^,]*")


def stored_name(text: str) -> str:
    return _PASSWORD_FILE.sub("", text)


def recorders(run: Run) -> list[tuple[str, Recorder]]:
    """The run's recorders by stored name, started at the first call (their sources
    recorded then)."""
    if run.power is not None:
        return run.power
    run.power = []
    specs = sources(run)
    if specs and not tuple(getattr(run.settings, "power", ())):
        for text in resume.power_sources(run)[1]:
            run.write(f"[pts power] {text}")
    for spec in specs:
        name = stored_name(spec.text)
        try:
            # --power drive: the session checked the drive reports its power (power_check)
            source = power_spec.build(spec, device=run.device.path, drive=drive.reader(
                run.device.path, log_file=getattr(run, "commands_log", None)))
            recorder = Recorder(source, say=lambda text: run.write(f"[pts power] {text}"))
            recorder.start()
        except (PowerSpecError, PowerSourceError) as exc:
            # it answered at the session's start (pts.session.power_check): said, recorded,
            # and the run goes on without it
            run.write(f"[pts power] source {name} could not be started: {exc}; the run goes "
                      f"on without it")
            run.ledger.append(records.PowerSourceInfo(
                test=None, name=name, measures="", interval_s=0.0, kind="", detail="",
                error=str(exc)))
            continue
        info = source.info
        run.ledger.append(records.PowerSourceInfo(
            test=None, name=name, measures=info.measures, interval_s=info.interval_s,
            kind=info.kind, detail=info.detail, window_s=info.window_s, sample_s=info.sample_s))
        run.power.append((name, recorder))
    return run.power


def sources(run: Run) -> tuple:
    """The run's --power sources; on --resume without --power, the stopped run's
    (pts.procedure.resume.power_sources): --power is no run.json option."""
    given = tuple(getattr(run.settings, "power", ()))
    return given if given or getattr(run, "resume", None) is None \
        else resume.power_sources(run)[0]


def measured(run: Run, test: str, round_no: int, indices: Sequence[int],
             fio: Callable[[], list]) -> list:
    """Runs `fio` (a round's points: each result has its Unix .start and .end), read at its
    edges, and stores each point's window of each source; fio's results."""
    if run.power is None and not sources(run):
        return fio()
    found = recorders(run)
    for _, rec in found:
        rec.read_now()
    began = time.monotonic()                     # inside the segment the reads opened
    results = fio()
    ended = time.monotonic()
    for _, rec in found:
        rec.read_now()
    offset = time.time() - time.monotonic()      # Unix = monotonic + offset, now
    for name, rec in found:
        w = rec.window(began, ended)
        run.ledger.append(records.RoundPower(
            test=test, round=round_no, source=name, start=began + offset, end=ended + offset,
            energy_j=w.energy_j, covered_s=w.covered_s, mean_w=w.mean_w, samples=w.samples,
            gaps=[[a - w.t0, b - w.t0] for a, b in w.gaps], max_w=w.max_w,
            state_counts=list(w.state_counts) if w.state_counts else None))
        for index, r in zip(indices, results, strict=True):
            w = rec.window(r.start - offset, r.end - offset)
            run.ledger.append(records.PointPower(
                test=test, round=round_no, index=index, source=name, start=r.start, end=r.end,
                energy_j=w.energy_j, covered_s=w.covered_s, mean_w=w.mean_w,
                samples=w.samples, gaps=[[a - w.t0, b - w.t0] for a, b in w.gaps],
                max_w=w.max_w, state_counts=list(w.state_counts) if w.state_counts else None))
    return results



def _stored(w, name: str) -> dict:
    return dict(source=name, energy_j=w.energy_j, covered_s=w.covered_s, mean_w=w.mean_w,
                samples=w.samples, gaps=[[a - w.t0, b - w.t0] for a, b in w.gaps],
                max_w=w.max_w, state_counts=list(w.state_counts) if w.state_counts else None)


@contextlib.contextmanager
def phase(run: Run, test: str, name: str, number: int) -> Iterator[None]:
    """Around a part of a test without rounds (a fio run, or a wait state's runs and idle):
    every source read at its edges and its window stored (a phase_power record per source)
    when the part ends; nothing when it raises (a stop: its window is not the part's)."""
    if run.power is None and not sources(run):
        yield
        return
    found = recorders(run)
    for _, rec in found:
        rec.read_now()
    began = time.monotonic()
    yield
    ended = time.monotonic()
    for _, rec in found:
        rec.read_now()
    offset = time.time() - time.monotonic()
    for source, rec in found:
        run.ledger.append(records.PhasePower(
            test=test, phase=name, number=number, start=began + offset, end=ended + offset,
            **_stored(rec.window(began, ended), source)))


def span(run: Run, test: str, name: str, number: int, start: float, end: float) -> None:
    """The window of [start, end] (Unix s: a part of a fio run `phase` read around, its
    edges from fio's logs) stored as a phase_power record per source."""
    if run.power is None and not sources(run):
        return
    offset = time.time() - time.monotonic()
    for source, rec in recorders(run):
        run.ledger.append(records.PhasePower(
            test=test, phase=name, number=number, start=start, end=end,
            **_stored(rec.window(start - offset, end - offset), source)))
