"""/metrics in the Prometheus text format, from a registry of its own (not the process-wide
one). Labels stay few: per device (model, serial) only its newest run folder is shown (older
runs are history, on the runs list), per test of that run its round and tracking values
(`variable`: the test's tracking labels, a handful), the run state as one series per state
(1 for the current one). With a results index (pts.serve.indexed) the index says which runs
there are; the figures of the newest run of each device are read from its folder, and per
model with two firmwares or more the release gate's answer for its two newest (A the older,
as the history page opens on) as the index keeps it (pts.index.gate_store, with the margins of
`pts serve --margins`): the exit status `pts history MODEL --firmware A --firmware B --gate`
gives (without an index, no such series). An alert rule on a firmware drop:
pts_release_gate_status == 1."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily

from pts.index import gate_store
from pts.serve import state
from pts.serve.index import RunIndex
from pts.serve.indexed import IndexedRuns
from pts.stored import power as stored_power

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DEVICE = ["model", "serial"]
TEST = DEVICE + ["test"]
PAIR = ["model", "firmware_a", "firmware_b"]


class RunsCollector:
    def __init__(self, index: RunIndex, stale_after: float = state.STALE_AFTER,
                 indexed: IndexedRuns | None = None):
        """`indexed`: the results index says which runs there are (counts per state, the
        newest run of each device); else every folder is read (pts.serve.index)."""
        self.index, self.stale_after, self.indexed = index, stale_after, indexed

    def collect(self):
        g = {
            "state": GaugeMetricFamily("pts_run_state", "1 for the state of the device's "
                                       "newest run folder", labels=DEVICE + ["state"]),
            "round": GaugeMetricFamily("pts_round", "the round in flight, else the last "
                                       "completed round", labels=TEST),
            "max": GaugeMetricFamily("pts_max_rounds", "rounds before giving up on steady "
                                     "state", labels=TEST),
            "steady": GaugeMetricFamily("pts_steady_state_reached", "1: the last round "
                                        "closed a steady window (or the test ended steady)",
                                        labels=TEST),
            "tracking": GaugeMetricFamily("pts_tracking_value", "the tracking variable's "
                                          "value in the last completed round",
                                          labels=TEST + ["variable"]),
            "watts": GaugeMetricFamily("pts_power_watts", "--power: mean W of the newest "
                                       "round's points (WSAT: its newest sample, XSR: its "
                                       "newest group; the first source's windows)",
                                       labels=TEST),
            "per_watt": GaugeMetricFamily("pts_iops_per_watt", "--power: the newest round's "
                                          "points' I/Os per joule (IOPS/W; WSAT, XSR: as "
                                          "pts_power_watts)", labels=TEST),
            "eta": GaugeMetricFamily("pts_eta_seconds", "seconds left of the test in flight "
                                     "(bound best: steady at the earliest round; worst: at "
                                     "max rounds), as the console's ETA",
                                     labels=TEST + ["bound"]),
            "temp": GaugeMetricFamily("pts_device_temperature_celsius", "from the latest "
                                      "device_counters health record", labels=DEVICE),
            "warn": GaugeMetricFamily("pts_device_critical_warning", "NVMe critical warning "
                                      "byte from the latest smart-log record", labels=DEVICE),
        }
        folders = GaugeMetricFamily("pts_run_folders", "run folders served, by state",
                                    labels=["state"])
        newest: dict[tuple[str, str], object] = {}
        if self.indexed is not None:
            counts, found = self.indexed.metric_runs(self.stale_after)
        else:
            entries = [e for e in self.index.refresh() if e.kind == "run"]
            counts = dict.fromkeys((*state.STATES, state.ERROR), 0)
            for entry in entries:
                counts[state.run_state(entry, self.stale_after)] += 1
            found = [e for e in entries if e.view is not None]
        for entry in found:                          # newest first
            dev = entry.view.device
            newest.setdefault((dev.model, dev.serial), entry)
        for (model, serial), entry in newest.items():
            self._device(g, [model, serial], entry)
        for name, n in counts.items():
            folders.add_metric([name], n)
        yield from (*g.values(), folders)
        if self.indexed is not None:
            yield from self._gates()

    def _gates(self):
        """Per model, its two newest firmwares' gate answer, as the index keeps it."""
        status = GaugeMetricFamily(
            "pts_release_gate_status", "the release gate's exit status for firmware A "
            "against B (the model's two newest): 0 pass, 1 a cell regressed beyond its "
            "margin, 3 inconclusive, 2 no answer (no figure on both sides)", labels=PAIR)
        cells = GaugeMetricFamily(
            "pts_release_gate_cells", "cells of the pair by the gate's class", labels=PAIR
            + ["class"])
        for kept in gate_store.stored(self.indexed.conn(), self.indexed.key,
                                      self.indexed.margins):
            labels = [kept.model, kept.a, kept.b]
            status.add_metric(labels, kept.status)
            found: dict[str, int] = {}
            for c in kept.gate.answer.cells if kept.gate else ():
                found[c.verdict] = found.get(c.verdict, 0) + 1
            for verdict, n in sorted(found.items()):
                cells.add_metric(labels + [verdict], n)
        yield from (status, cells)

    def _device(self, g: dict, device: list[str], entry) -> None:
        now = state.run_state(entry, self.stale_after)
        for name in state.STATES:
            g["state"].add_metric(device + [name], 1 if name == now else 0)
        run = entry.view
        for test in run.tests:
            labels = device + [test.name]
            _, flying = state.phase(test)
            last = test.rounds[-1] if test.rounds else None
            if flying or last:
                g["round"].add_metric(labels, flying or last.number)
            if isinstance(test.max_rounds, int):
                g["max"].add_metric(labels, test.max_rounds)
            reached = test.state == "steady" or bool(last and last.steady)
            g["steady"].add_metric(labels, 1 if reached else 0)
            left = state.eta(test) if now == state.RUNNING else None
            if left is not None:
                for bound, seconds in zip(("best", "worst"), left, strict=True):
                    g["eta"].add_metric(labels + [bound], seconds)
            for variable, value in (last.tracking if last else {}).items():
                g["tracking"].add_metric(labels + [variable], value)
            power = stored_power.latest(test)             # None: a run without --power
            if power is not None:
                g["watts"].add_metric(labels, power.mean_w)
                if power.iops_per_w is not None:
                    g["per_watt"].add_metric(labels, power.iops_per_w)
        health = state.latest_health(state.current_test(run))
        for key, fam in (("temperature_c", "temp"), ("critical_warning", "warn")):
            value = (health.health or {}).get(key) if health else None
            if value is not None:
                g[fam].add_metric(device, value)


def registry(index: RunIndex, stale_after: float = state.STALE_AFTER,
             indexed: IndexedRuns | None = None) -> CollectorRegistry:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(RunsCollector(index, stale_after, indexed))
    return reg


def text(reg: CollectorRegistry) -> bytes:
    return generate_latest(reg)
