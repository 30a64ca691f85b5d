"""The dashboard's history page of a drive model
(/history?model=M&firmware=A&firmware=B[&spec=S][&host=H]): what `python -m pts history`
prints, from the same code (pts.index.history) over the same results index (the one the
runs list reads), as HTML: the runs by firmware and sample, firmware A
against B cell by cell with the verdicts, the release gate's answer for the pair and each
cell's class (pts.index.history_gate: what `pts history ... --gate` answers, at the page's
level if the gate takes it, with the built-in margins), and each figure over the runs as a
small SVG chart (one colour per firmware, the change points as dashed lines) beside its
spread per firmware.

The gate's answer for the model's two newest firmwares over all its runs at the gate's level
is the one the results index keeps (pts.index.gate_store: worked out when the runs changed,
with the margins of `pts serve --margins`, else the built-in ones); another pair, level,
spec, host, test or metric is worked out for the request, and the page says which.

Without the index the page says how to make one: the history is a query over it."""

from __future__ import annotations

import time
from dataclasses import dataclass
from html import escape

from pts.config import margins as margins_mod
from pts.index import gate_store, history, history_gate, release_gate

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#7f7f7f")
WIDTH, HEIGHT, PAD = 360, 120, 28


@dataclass(frozen=True)
class Asked:
    model: str
    firmwares: tuple[str, ...]
    level: float
    test: str
    metric: str
    errors: tuple[str, ...]
    spec: str = ""
    host: str = ""


def asked(params) -> Asked:
    """The page's query parameters; a bad level is named and the default used."""
    errors, level = [], history.LEVEL
    raw = (params.get("level") or "").strip()
    if raw:
        try:
            level = float(raw)
            if not 0 < level < 1:
                raise ValueError
        except ValueError:
            errors.append(f"level {raw!r}: give a number between 0 and 1 "
                          f"({history.LEVEL:g} used)")
            level = history.LEVEL
    return Asked((params.get("model") or "").strip(),
                 tuple(f for f in params.getlist("firmware") if f), level,
                 (params.get("test") or "").strip(), (params.get("metric") or "").strip(),
                 tuple(errors), (params.get("spec") or "").strip(),
                 (params.get("host") or "").strip())


def defaults(conn, a: Asked, root: str) -> tuple[str, ...]:
    """The firmwares compared: those asked for, else the model's two newest (A the older),
    so that the page opens on "did the newest firmware change anything"."""
    if a.firmwares:
        return a.firmwares
    found = history.firmwares(conn, a.model, root)
    return found[-2:] if len(found) >= 2 else ()


def page_context(params, indexed, folder_note: str, id_of,
                 margins: margins_mod.Margins | None = None) -> dict:
    """What history.html shows for a request's query parameters. `indexed`: the dashboard's
    pts.serve.indexed.IndexedRuns (None: no index; `folder_note` says why); `margins`: the
    gate's (`pts serve --margins`; None: built in)."""
    a = asked(params)
    context = {"asked": a, "h": None, "error": None, "note": "", "chart": chart,
               "colours": {}, "firmwares": (), "id_of": id_of, "gate": None,
               "gate_error": None, "gate_source": "",
               "margins_text": "the built-in margins (pts/config/margins.py)" if margins is None
               else f"the margins of `pts serve --margins` ({margins.key})"}
    if indexed is None:
        context["note"] = "The history of a model is read from the results index. " \
            + folder_note
        return context
    if not a.model:
        context["error"] = "give a model: /history?model=MODEL (the runs list links it)"
        return context
    try:
        conn = indexed.conn()
        chosen = defaults(conn, a, indexed.key)
        h = history.history(conn, a.model, chosen, a.level, indexed.key, a.spec or None,
                            a.host or None)
        h = history.narrowed(h, a.test or None, a.metric or None)
    except history.HistoryError as exc:
        context["error"] = str(exc)
        return context
    if h.a is not None:
        context |= gate_context(conn, indexed.key, a, h, margins)
    return context | {"h": h, "firmwares": chosen, "colours": colours(h),
                      "note": indexed.note()}


def gate_context(conn, root: str, a: Asked, h: history.History,
                 margins: margins_mod.Margins | None) -> dict:
    """The gate's answer for the page: the index's when it keeps this very question (the
    model's two newest firmwares, all runs and figures, the gate's level), else worked out."""
    whole = not (a.spec or a.host or a.test or a.metric) and a.level == release_gate.LEVEL
    kept = gate_store.stored(conn, root, margins, h.model) if whole else []
    if kept and (kept[0].a, kept[0].b) == (h.a, h.b):
        g = kept[0]
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(g.computed_at))
        return {"gate": g.gate, "gate_error": None if g.gate else f"release gate: {g.summary}",
                "gate_source": f"kept in the results index (worked out {when}, when the "
                               "model's runs last changed)"}
    try:
        return {"gate": history_gate.pair_gate(h, margins, level=a.level),
                "gate_source": "worked out for this page (the index keeps the answer for the "
                               "model's two newest firmwares over all its runs at level "
                               f"{release_gate.LEVEL:g})"}
    except release_gate.GateInputError as exc:
        return {"gate_error": f"release gate: {exc}"}


def colours(h: history.History) -> dict[str, str]:
    return {fw: COLOURS[n % len(COLOURS)] for n, fw in enumerate(h.firmwares)}


def chart(f: history.Figure, h: history.History) -> str:
    """An SVG of the figure's values over the runs (x: the run's number), one colour per
    firmware; each change point a dashed line before the run that starts the new level."""
    firmware = {r.number: r.firmware for r in h.runs}
    colour = colours(h)
    last = max(r.number for r in h.runs) or 1
    low, high = f.overall.low, f.overall.high
    if high == low:
        low, high = low - (abs(low) * 0.05 or 1), high + (abs(high) * 0.05 or 1)

    def x(n: float) -> float:
        return PAD + (WIDTH - 2 * PAD) * ((n - 1) / (last - 1) if last > 1 else 0.5)

    def y(v: float) -> float:
        return HEIGHT - PAD + (2 * PAD - HEIGHT) * (v - low) / (high - low)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'class="history-chart" role="img" aria-label="{escape(f.label)} over the runs">',
             f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
             'stroke="#999"/>',
             f'<text x="2" y="{PAD - 8}" font-size="10">{escape(_num(f.overall.high))}</text>',
             f'<text x="2" y="{HEIGHT - PAD + 12}" font-size="10">'
             f'{escape(_num(f.overall.low))}</text>',
             f'<text x="{WIDTH - PAD}" y="{HEIGHT - 4}" font-size="10" text-anchor="end">'
             f'run #</text>']
    for lv in f.levels:
        at = x(lv.run - 0.5)
        parts.append(f'<line x1="{at:.1f}" y1="{PAD - 10}" x2="{at:.1f}" y2="{HEIGHT - PAD}" '
                     f'stroke="#555" stroke-dasharray="4 3"><title>run #{lv.run} starts a new '
                     f'level (p = {lv.p_value:.3g})</title></line>')
    for n, v in f.values:
        parts.append(f'<circle cx="{x(n):.1f}" cy="{y(v):.1f}" r="3.5" '
                     f'fill="{colour.get(firmware.get(n), "#000")}"><title>run #{n} '
                     f'{escape(firmware.get(n, ""))}: {escape(_num(v))}</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


def _num(x: float) -> str:
    return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.4g}"
