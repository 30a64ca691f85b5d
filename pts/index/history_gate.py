"""The release gate over a model's history (issue 50 §4): firmware A's runs against B's, one
pts.index.release_gate.Cell per figure of the history (pts.index.history), answered once for
the pair. The one mechanism behind `python -m pts history MODEL --firmware A --firmware B
--gate`, the dashboard's history page and its /metrics gauge.

A cell: the figure's label (test, metric, cell: history.label_of), its values split by
firmware, each with the serial of the run that gave it (so the gate pairs by drive when both
firmwares ran on the same drives), which way is better (history.better: the figure
catalogue's, pts.stored.figures) and its margin (pts.config.margins: the built-in ones, or a
lab's file over them). The runs are the history's: finished, dated, of the spec and host
asked for; a figure with no value on a side is a cell "not on both sides".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pts.config import margins as margins_mod
from pts.index import history, release_gate


@dataclass(frozen=True)
class PairGate:
    """The gate's answer for h.a against h.b, and the margin each cell was judged against."""

    model: str
    a: str
    b: str
    answer: release_gate.GateAnswer
    margins: tuple[tuple[str, margins_mod.Margin], ...]      # (cell, its margin), cell order

    @property
    def status(self) -> int:
        return self.answer.status

    def as_data(self) -> dict:
        """The answer as JSON-ready data (the command's --json with --gate)."""
        margin_of = dict(self.margins)
        g = self.answer
        return {"model": self.model, "a": self.a, "b": self.b, "status": g.status,
                "answer": g.answer, "summary": g.summary, "level": g.level,
                "power": g.power, "correction": g.correction, "regressed": list(g.regressed),
                "inconclusive": list(g.inconclusive),
                "runs_to_add": [[c, n] for c, n in g.runs_to_add],
                "cells": [{**dataclasses.asdict(c), "margin_source": margin_of[c.name].where,
                           "margin_why": margin_of[c.name].why,
                           "margin_percent": margin_of[c.name].percent} for c in g.cells]}


MARGIN_KEYS = ("margin_source", "margin_why", "margin_percent")


def from_data(doc: dict) -> PairGate:
    """The PairGate that as_data() gave `doc` (the answer kept in the index:
    pts.index.gate_store), equal to the one it came from."""
    cells = tuple(release_gate.CellAnswer(**{k: v for k, v in c.items() if k not in MARGIN_KEYS})
                  for c in doc["cells"])
    answer = release_gate.GateAnswer(
        doc["status"], doc["answer"], doc["level"], doc["power"], doc["correction"], cells,
        tuple(doc["regressed"]), tuple(doc["inconclusive"]),
        tuple((c, n) for c, n in doc["runs_to_add"]))
    used = tuple((c["name"], margins_mod.Margin(c["margin_percent"], c["margin_why"],
                                                c["margin_source"])) for c in doc["cells"])
    return PairGate(doc["model"], doc["a"], doc["b"], answer, used)


def cells(h: history.History, margins: margins_mod.Margins
          ) -> tuple[list[release_gate.Cell], list[tuple[str, margins_mod.Margin]]]:
    """One gate cell per figure of `h` (which must compare two firmwares), and its margin."""
    if h.a is None or h.b is None:
        raise release_gate.GateInputError("the gate compares two firmwares: give --firmware "
                                          "A --firmware B")
    serial = {r.number: r.serial for r in h.runs}
    firmware = {r.number: r.firmware for r in h.runs}
    out, used = [], []
    for f in h.figures:
        margin = margins.of(f.metric, f.unit)
        side = {fw: tuple(release_gate.Sample(serial[n], v) for n, v in f.values
                          if firmware[n] == fw) for fw in (h.a, h.b)}
        out.append(release_gate.Cell(f.label, side[h.a], side[h.b],
                                     history.better(f.test, f.metric, f.unit),
                                     margin.fraction))
        used.append((f.label, margin))
    return out, used


def pair_gate(h: history.History, margins: margins_mod.Margins | None = None,
              level: float = release_gate.LEVEL) -> PairGate:
    """The gate's answer for h.a against h.b; GateInputError: bad input (exit 2)."""
    found, used = cells(h, margins or margins_mod.defaults())
    return PairGate(h.model, h.a, h.b, release_gate.gate(found, level), tuple(used))


def text(p: PairGate) -> list[str]:
    """The gate as the command prints it: a line per cell, then the pair's answer."""
    g = p.answer
    margin_of = dict(p.margins)

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{x * 100:+.2f} %"

    def pv(x: float | None) -> str:
        return "-" if x is None else f"{x:.3g}"

    out = [f"release gate, firmware A {p.a} against B {p.b}: each cell against its margin "
           f"(two one-sided tests), level {g.level:g} for the pair; {g.correction}",
           "  cell  |  class  |  method  |  n A, B  |  B vs A  |  interval "
           f"({1 - 2 * g.level:.0%})  |  margin  |  Holm p worse, better  |  runs to add"]
    for c in g.cells:
        m = margin_of[c.name]
        runs = "-" if c.runs_a_side is None else f"{c.runs_a_side} a side"
        interval = "-" if c.low is None else f"{pct(c.low)} .. {pct(c.high)}"
        out.append(f"  {c.name}  |  {c.verdict}  |  {c.method}  |  {c.n_a}, {c.n_b}  |  "
                   f"{pct(c.change)}  |  {interval}  |  {m.percent:g} %, {m.where}  |  "
                   f"{pv(c.p_worse)}, {pv(c.p_better)}  |  {runs}  ({c.why})")
    out.append(f"gate: {g.answer} (exit {g.status}): {g.summary}")
    return out
