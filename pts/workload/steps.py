"""Per-step figures of a capture (a step is `step_seconds` long, a reading of
specs/rwsw-*.toml [rwsw_capture]; the last step may be shorter: it ends with the capture).

"I/Os" are the capture's reads and writes (the stream rows, pts.workload.streams); flushes,
discards and other operations are counted apart by the characteriser and take no part here.
Per step, for the I/Os *issued* in it: I/Os, IOPS, MB/s (10^6 bytes per second), response
time mean and max (complete - issue, of the I/Os whose completion was seen), per stream and
per process (comm) counts. From the issue/complete times of all I/Os (the sweep below):
outstanding I/Os (OIO) time-averaged over the step (mean) and max (the highest count held
for a positive time), busy % (share of the step with >= 1 outstanding I/O).

An I/O whose completion was not seen (events.NO_TIME) counts as outstanding until the end
of the capture (or of the --to window) and has no response time; `Timeline.incomplete`
counts them. A completion after the window's end is cut there (its response time is not).

The sweep: +1 at each issue, -1 at each completion, step boundaries as 0-events, sorted by
time (at equal times issues first, so no count goes below zero; a tie lasts no time and
takes no part in the max). Between two events the count is constant and inside one step, so
each step's time integral, busy time and max are bincounts. Batches are swept up to their
last issue time: the rows are in issue order, so no later batch has an event before it; the
completions after it are carried to the next batch (about OIO of them). Memory is flat.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from pts.workload.atw import StreamKey
from pts.workload.streams import key

NS = 1_000_000_000


@dataclass(frozen=True)
class StepFigures:
    start_s: float                    # from the capture's start
    seconds: float
    ios: int
    iops: float
    mbps: float                       # 10^6 bytes per second
    oio_mean: float                   # time-averaged over the step
    oio_max: int
    rt_mean_ms: float | None          # None: no I/O of the step completed
    rt_max_ms: float | None
    busy_pct: float
    streams: dict[StreamKey, int]     # I/Os per stream
    processes: dict[str, int]         # I/Os per comm


class Timeline:
    """Accumulates one capture window's batches; `figures()` gives the steps."""

    def __init__(self, start_ns: int, step_ns: int, end_ns: int | None = None):
        if step_ns <= 0:
            raise ValueError(f"the step must be > 0 s, not {step_ns / NS:g}")
        self.start_ns, self.step_ns, self.end_ns = int(start_ns), int(step_ns), end_ns
        self.t_last = self.start_ns      # swept up to here
        self.level = 0                   # outstanding at t_last
        self.incomplete = 0
        self.out_of_order = 0            # rows issued before the previous batch's last issue
        self.seen_ns = self.start_ns     # latest issue/completion seen (the end without --to)
        self._carry_t = np.empty(0, np.int64)      # events at/after t_last, not swept yet
        self._carry_d = np.empty(0, np.int64)
        f64, i64 = np.float64, np.int64
        self.a = {"ios": np.zeros(0, i64), "bytes": np.zeros(0, i64), "rt_sum": np.zeros(0, f64),
                  "rt_n": np.zeros(0, i64), "rt_max": np.zeros(0, i64), "oio_ns": np.zeros(0, f64),
                  "busy_ns": np.zeros(0, f64), "oio_max": np.zeros(0, i64)}
        self.hist = np.zeros(1, np.float64)         # ns spent at each outstanding count
        self.by_stream: Counter = Counter()         # (step, stream code) -> I/Os
        self.by_comm: Counter = Counter()           # (step, comm) -> I/Os

    def _grow(self, steps: int) -> None:
        have = len(self.a["ios"])
        if steps > have:
            extra = max(steps, 2 * have) - have
            for name, arr in self.a.items():
                self.a[name] = np.concatenate([arr, np.zeros(extra, arr.dtype)])

    def _step(self, t: np.ndarray) -> np.ndarray:
        return (t - self.start_ns) // self.step_ns

    def add(self, issue: np.ndarray, complete: np.ndarray, nbytes: np.ndarray,
            codes: np.ndarray, comm: np.ndarray | None = None,
            comm_names: list[str] | None = None) -> None:
        """One batch of I/Os (in issue order, issued inside the window). `comm`: names, or
        codes into `comm_names`."""
        if not len(issue):
            return
        early = issue < self.t_last
        if early.any():
            self.out_of_order += int(early.sum())
            issue = np.where(early, self.t_last, issue)
        done = complete >= 0
        self.incomplete += int(len(done) - done.sum())
        complete = np.where(done, np.maximum(complete, issue), -1)
        step = self._step(issue)
        self._grow(int(step[-1]) + 1)
        n = len(self.a["ios"])
        a = self.a
        a["ios"] += np.bincount(step, minlength=n)
        a["bytes"] += np.bincount(step, weights=nbytes, minlength=n).astype(np.int64)
        rt = complete[done] - issue[done]
        a["rt_sum"] += np.bincount(step[done], weights=rt, minlength=n)
        a["rt_n"] += np.bincount(step[done], minlength=n)
        np.maximum.at(a["rt_max"], step[done], rt)
        _count(self.by_stream, step, codes, None)
        if comm is not None:
            _count(self.by_comm, step, comm, comm_names)
        self.seen_ns = max(self.seen_ns, int(issue[-1]), int(complete.max()))
        times = np.concatenate([self._carry_t, issue, complete[done]])
        deltas = np.concatenate([self._carry_d, np.ones(len(issue), np.int64),
                                 -np.ones(int(done.sum()), np.int64)])
        self._sweep(times, deltas, int(issue[-1]))

    def _sweep(self, times: np.ndarray, deltas: np.ndarray, cut: int) -> None:
        later = times >= cut
        self._carry_t, self._carry_d = times[later], deltas[later]
        times, deltas = times[~later], deltas[~later]
        if cut <= self.t_last:
            return
        first = self._step(np.array([self.t_last]))[0] + 1
        last = self._step(np.array([cut - 1]))[0]
        bounds = self.start_ns + np.arange(first, last + 1, dtype=np.int64) * self.step_ns
        times = np.concatenate([[self.t_last], bounds, times])
        deltas = np.concatenate([np.zeros(1 + len(bounds), np.int64), deltas])
        order = np.argsort(times * 2 + (deltas < 0), kind="stable")
        times, deltas = times[order], deltas[order]
        levels = self.level + np.cumsum(deltas)
        dur = np.diff(np.append(times, cut)).astype(np.float64)
        step = self._step(times)
        self._grow(int(step[-1]) + 1)
        n, a = len(self.a["ios"]), self.a
        a["oio_ns"] += np.bincount(step, weights=levels * dur, minlength=n)
        a["busy_ns"] += np.bincount(step, weights=dur * (levels > 0), minlength=n)
        held = dur > 0
        np.maximum.at(a["oio_max"], step[held], levels[held])
        hist = np.bincount(levels, weights=dur)
        if len(hist) > len(self.hist):
            self.hist = np.concatenate([self.hist, np.zeros(len(hist) - len(self.hist))])
        self.hist[:len(hist)] += hist
        self.level = int(levels[-1])
        self.t_last = cut

    def finish(self, at_least_ns: int = 0) -> int:
        """Sweeps to the window's end: the --to, else the last issue/completion seen or
        `at_least_ns` (the capture's recorded length), whichever is later; the I/Os never
        completed end there. Returns the end in ns."""
        end = self.end_ns if self.end_ns is not None else max(self.seen_ns, at_least_ns)
        end = max(end, self.t_last)
        self._sweep(self._carry_t, self._carry_d, end)
        self.level, self.end_ns = 0, end
        return end

    def figures(self) -> tuple[StepFigures, ...]:
        """The steps from the window's start to its end (call after `finish`)."""
        end = self.end_ns
        steps = max(1, -(-(end - self.start_ns) // self.step_ns))
        self._grow(steps)
        a, out = self.a, []
        streams: dict[int, dict] = {}
        for (s, c), n in sorted(self.by_stream.items()):
            streams.setdefault(s, {})[key(c)] = n
        comms: dict[int, dict] = {}
        for (s, c), n in sorted(self.by_comm.items()):
            comms.setdefault(s, {})[c] = n
        for i in range(steps):
            t0 = self.start_ns + i * self.step_ns
            ns = max(1, min(self.step_ns, end - t0))
            sec, rt_n = ns / NS, int(a["rt_n"][i])
            out.append(StepFigures(
                start_s=t0 / NS, seconds=sec, ios=int(a["ios"][i]),
                iops=float(a["ios"][i] / sec), mbps=float(a["bytes"][i] / sec / 1e6),
                oio_mean=float(a["oio_ns"][i] / ns), oio_max=int(a["oio_max"][i]),
                rt_mean_ms=float(a["rt_sum"][i] / rt_n / 1e6) if rt_n else None,
                rt_max_ms=float(a["rt_max"][i] / 1e6) if rt_n else None,
                busy_pct=float(100 * a["busy_ns"][i] / ns),
                streams=streams.get(i, {}), processes=comms.get(i, {})))
        return tuple(out)


def _count(counter: Counter, step: np.ndarray, values: np.ndarray,
           names: list[str] | None) -> None:
    """counter[(step, value)] += rows, for values that are ints (codes) or strings."""
    uniq, inv = np.unique(values, return_inverse=True)
    width = len(uniq)
    pairs, counts = np.unique(step * width + inv, return_counts=True)
    for p, n in zip(pairs.tolist(), counts.tolist(), strict=True):
        v = uniq[p % width]
        v = names[int(v)] if names is not None else (v.item() if hasattr(v, "item") else v)
        counter[(p // width, v)] += n
