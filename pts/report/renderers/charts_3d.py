"""3D bar plots of a block size x R/W mix matrix (PTS report pages: IOPS, Latency ART/MRT),
as PNG bytes on the chart base, pts.report.renderers.chart_base (own Agg canvas, fixed size
and dpi, no "Software" tag: the same data gives the same bytes).

matplotlib's 3D axes do not support a log scale, so a log plot draws log10(value) as the bar
height and labels the z ticks with the values themselves (1, 2, 5 per decade); the z label
says "log scale". Both horizontal axes are categorical: block sizes in the spec's loop
order, R/W mixes in the spec's loop order. N/A cells get no bar (never a zero).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pts.report.renderers.chart_base import DPI, STYLE, drawn_once, png, tick, wide_range
from pts.report.renderers.mpl import mpl
from pts.stored import fmt

SIZE_INCHES = (7.2, 5.0)
BAR_FILL = 0.5          # bar footprint as a fraction of a category cell
ELEVATION, AZIMUTH = 30, -60


def _log_ticks(low: float, high: float) -> list[float]:
    """1-2-5 values per decade covering [low, high]; only 1 per decade over more than two
    decades (the z axis is short)."""
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    subs = (1.0,) if last - first > 2 else (1.0, 2.0, 5.0)
    ticks = [s * 10.0 ** e for e in range(first, last + 1) for s in subs]
    return [t for t in ticks if low <= t <= high * 1.0001]


@drawn_once
def bars(block_sizes: Sequence[int], rw_mixes: Sequence[str],
         values: Mapping[tuple[str, int], float | None], zlabel: str, title: str,
         log: bool | None = None) -> bytes:
    """One bar per (R/W mix, block size) with a positive value. log None: log scale when the
    values span more than a decade (4 KiB vs 1024 KiB IOPS)."""
    # The first R/W mix (100/0, usually the tallest bars) at the back, so it hides nothing.
    back = len(rw_mixes) - 1
    cells = [(i, back - j, values.get((mix, bs))) for i, bs in enumerate(block_sizes)
             for j, mix in enumerate(rw_mixes)]
    cells = [(i, j, v) for i, j, v in cells if v is not None and v > 0]
    log = wide_range([v for _, _, v in cells]) if log is None else log
    with mpl().rc_context(STYLE):
        fig = mpl().Figure(figsize=SIZE_INCHES, dpi=DPI)
        mpl().FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1, projection="3d")
        if cells:
            _draw(ax, cells, log, back)
        ax.set_xticks([i + 0.5 for i in range(len(block_sizes))],
                      [fmt.block_size(bs) for bs in block_sizes])
        ax.set_yticks([back - j + 0.5 for j in range(len(rw_mixes))],
                      [str(m) for m in rw_mixes])
        ax.set_xlim(0, max(1, len(block_sizes)))
        ax.set_ylim(0, max(1, len(rw_mixes)))
        ax.set_xlabel("Block size", labelpad=6)
        ax.set_ylabel("R/W mix (read/write %)", labelpad=8)
        ax.set_zlabel(zlabel + (" (log scale)" if log else ""), labelpad=10)
        ax.set_title(title)
        ax.view_init(elev=ELEVATION, azim=AZIMUTH)
        return png(fig)


def _draw(ax, cells: list[tuple[int, int, float]], log: bool, back: int) -> None:
    values = [v for _, _, v in cells]
    if log:
        # A decade floor at least 0.2 decades under the smallest value: no bar is flat.
        base = 10.0 ** math.floor(math.log10(min(values)) - 0.2)
        top = 10.0 ** math.ceil(math.log10(max(values)))
        if top == base:
            top = base * 10
        heights = [math.log10(v / base) for v in values]
        ticks = _log_ticks(base, top)
        ax.set_zticks([math.log10(t / base) for t in ticks], [tick(t) for t in ticks])
        ax.set_zlim(0, math.log10(top / base))
    else:
        heights = values
        ax.set_zlim(0, max(values) * 1.05)
        ax.zaxis.set_major_formatter(mpl().FuncFormatter(lambda v, _pos: tick(v)))
    off = (1 - BAR_FILL) / 2
    # Each R/W mix in its colour of the 2D plot (matplotlib's default cycle, first mix C0).
    colours = [f"C{(back - j) % 10}" for _, j, _ in cells]
    ax.bar3d([i + off for i, _, _ in cells], [j + off for _, j, _ in cells],
             [0.0] * len(cells), BAR_FILL, BAR_FILL, heights, color=colours, shade=True,
             edgecolor="#333333", linewidth=0.3)
