"""The workload pages' charts (RWSW, issue 32 §4) on the chart base: the IO stream map (each
stream's share of a step's I/Os, stacked, per step) and the outstanding-I/O histogram."""

from __future__ import annotations

from collections.abc import Sequence

from pts.report.renderers.chart_base import STYLE, drawn_once, legend_below, new_figure, png
from pts.report.renderers.mpl import mpl


@drawn_once
def stream_map(starts: Sequence[float], streams: Sequence[str],
               shares: Sequence[Sequence[float]], title: str) -> bytes:
    """Stacked bars: per step (x: its start, s), each stream's % of the step's I/Os; the
    rest of the bar to 100 % is the I/O of streams outside the map."""
    with mpl().rc_context(STYLE):
        fig, ax = new_figure()
        xs = list(range(len(starts)))
        bottom = [0.0] * len(xs)
        for k, name in enumerate(streams):
            ys = [row[k] for row in shares]
            ax.bar(xs, ys, bottom=bottom, width=0.85, label=name)
            bottom = [b + y for b, y in zip(bottom, ys, strict=True)]
        every = max(1, len(xs) // 12)
        ax.set_xticks(xs[::every], [f"{s:g}" for s in list(starts)[::every]])
        ax.set_ylim(0, 100)
        ax.set(xlabel="Step start (s since the capture's start)", ylabel="% of the step's I/Os",
               title=title)
        legend_below(ax, "IO stream")
        return png(fig)


@drawn_once
def oio_histogram(seconds: Sequence[float], title: str) -> bytes:
    """Time-weighted OIO: % of the busy time (>= 1 outstanding I/O) at each count."""
    busy = sum(seconds[1:])
    with mpl().rc_context(STYLE):
        fig, ax = new_figure()
        counts = list(range(1, len(seconds)))
        ax.bar(counts, [100 * s / busy if busy else 0.0 for s in seconds[1:]], width=0.85)
        ax.set(xlabel="Outstanding I/Os", ylabel="% of busy time", title=title)
        ax.xaxis.set_major_locator(mpl().MaxNLocator(integer=True))
        return png(fig)
