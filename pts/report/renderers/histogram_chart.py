"""Response-time histograms as PNG bytes (on pts.report.renderers.chart_base): I/O count per fio
latency bin on log axes, with vertical lines at the marked levels (ART, the nines, MRT).

One figure holds the panels of several cells (one R/W mix, one panel per block size, one
shared response-time axis), so the block sizes compare at a glance and the report draws 3
figures for the Latency test instead of 9 (each figure costs ~1 s to draw). Every bin is
one rectangle of one compound path per panel (a single artist): a cell's window holds up to
~1,800 non-empty bins, and one bar artist each (Axes.bar) takes seconds to draw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pts.report.renderers.chart_base import DPI, LINE_STYLES, STYLE, drawn_once, png, tick
from pts.report.renderers.mpl import mpl
from pts.tools.histogram import PLAT_VAL

BAR_COLOUR = "#4c72b0"
FLOOR = 0.7        # bars start just under one I/O, so a single I/O shows on the log axis
WIDTH = 7.2        # inches, as every chart
PANEL_HEIGHT = 1.9
LEGEND_HEIGHT = 0.7
# The levels a panel can mark, in legend order (the Latency test's); DIRTH/CBW add 99.9 %.
LEVELS = ("ART", "99.99 %", "99.999 %", "99.9999 %", "MRT")
# Each level keeps its colour and line style on every chart, whichever levels it shows.
STYLED = ("ART", "99.99 %", "99.999 %", "99.9999 %", "MRT", "99.9 %", "99 %")


def size_inches(panels: int) -> tuple[float, float]:
    return WIDTH, PANEL_HEIGHT * max(1, panels) + LEGEND_HEIGHT


def _style(label: str) -> dict:
    n = STYLED.index(label) if label in STYLED else len(STYLED)
    return {"color": f"C{1 + n}", "linestyle": LINE_STYLES[n % len(LINE_STYLES)]}


@drawn_once
def panels(cells: Sequence[tuple[str, Mapping[int, int], Mapping[str, float]]],
           title: str, levels: Sequence[str] = LEVELS,
           xlabel: str = "Response time (µs, fio total latency)") -> bytes:
    """One panel per (panel title, bins {bin midpoint ns: I/Os}, marks {level: µs}); the
    `levels` are named in their order in one legend under the panels."""
    with mpl().rc_context(STYLE):
        fig = mpl().Figure(figsize=size_inches(len(cells)), dpi=DPI)
        mpl().FigureCanvasAgg(fig)
        axes = fig.subplots(max(1, len(cells)), 1, sharex=True, squeeze=False)[:, 0]
        top = [1.0]
        lows, highs = [], []
        for ax, (name, bins, marks) in zip(axes, cells, strict=False):
            xs = sorted(v for v, c in bins.items() if c)
            _bars(ax, bins, xs)
            if xs:
                lows.append(xs[0] / 1e3)
                highs.append(max([xs[-1] / 1e3, *marks.values()]))
                top.append(max(bins[x] for x in xs))
            for label, value in marks.items():
                ax.axvline(value, linewidth=1.0, label=label, **_style(label))
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(mpl().FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
            ax.set_ylabel("I/O count")
            ax.set_title(name, fontsize=8)
        for ax in axes:
            ax.set_ylim(FLOOR, max(top) * 2)
        ax = axes[-1]
        ax.set_xscale("log")
        if lows:
            ax.set_xlim(min(lows) * 0.8, max(highs) * 1.25)
        ax.xaxis.set_major_locator(mpl().LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(mpl().FuncFormatter(lambda v, _pos: tick(v)))   # 10, 2.5
        ax.xaxis.set_minor_formatter(mpl().NullFormatter())
        ax.set_xlabel(xlabel)
        fig.suptitle(title, fontsize=9)
        handles = [mpl().Line2D([], [], linewidth=1.0, label=label, **_style(label))
                   for label in levels]
        fig.legend(handles=handles, loc="lower center", ncol=len(levels), frameon=False)
        # Fixed margins (inches), not tight_layout: laying out log axes costs ~1 s a figure.
        height = size_inches(len(cells))[1]
        fig.subplots_adjust(left=0.1, right=0.98, top=1 - 0.6 / height,
                            bottom=(LEGEND_HEIGHT + 0.1) / height, hspace=0.45)
        return png(fig, tight=False)


def _bars(ax, bins: Mapping[int, int], xs: list[int]) -> None:
    # fio's bins above 128 ns are 1/64 of their power of two wide (pts.tools.histogram).
    # All bars are one compound path (one artist, one SVG element): a PolyCollection of
    # ~1,800 bars a panel took most of the HTML report's time as ~430,000 SVG elements.
    if not xs:
        return
    mid = np.asarray(xs, dtype=float) / 1e3
    half = np.maximum(mid / PLAT_VAL, 1e-3) / 2
    top = np.asarray([bins[x] for x in xs], dtype=float)
    floor = np.full_like(mid, FLOOR)
    corners = [(mid - half, floor), (mid - half, top), (mid + half, top), (mid + half, floor),
               (mid - half, floor)]
    verts = np.stack([np.column_stack(c) for c in corners], axis=1).reshape(-1, 2)
    path = mpl().Path
    codes = np.tile([path.MOVETO, path.LINETO, path.LINETO, path.LINETO, path.CLOSEPOLY],
                    len(xs))
    # autolim off: Axes.add_patch walks every segment for the limits (seconds); set them here.
    # rasterized: in the HTML report's SVG the bars are one embedded image (axes, lines and
    # text stay vector); as vector paths they were ~7 MB a figure. The PNG is the same.
    ax.add_collection(mpl().PathCollection([path(verts, codes)], facecolors=BAR_COLOUR,
                                           edgecolors="none", rasterized=True), autolim=False)
    ax.update_datalim(verts)
