"""The chart base every chart module draws with (the report's, compare's, the dashboard's):
one size, dpi and style, a figure on its own Agg canvas, the legend below the axes, log axes
labelled in plain numbers, and the PNG-or-SVG output.

Each figure gets its own FigureCanvasAgg: the Agg backend is chosen explicitly per figure
instead of through pyplot, so no global backend state is touched and nothing can open a
window. Size, dpi and style are fixed and the PNG "Software" tag is dropped, so the same data
gives the same bytes (and the PDF stays byte-identical).
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import io
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pts.report.renderers.mpl import mpl
from pts.stored import fmt

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SIZE_INCHES = (7.2, 3.9)
SHORT_SIZE_INCHES = (7.2, 2.6)   # a secondary chart that shares its page with a table
DPI = 150
STYLE = {"font.size": 8, "axes.titlesize": 9, "legend.fontsize": 7, "axes.grid": True,
         "grid.alpha": 0.35, "savefig.facecolor": "white", "path.simplify": False}
WINDOW_SHADE = "#f3d9a4"
LINE_STYLES = ("-", "--", ":", "-.")


def new_figure(size: tuple[float, float] = SIZE_INCHES) -> tuple[Figure, object]:
    fig = mpl().Figure(figsize=size, dpi=DPI)
    mpl().FigureCanvasAgg(fig)
    return fig, fig.add_subplot(1, 1, 1)


def legend_below(ax, title: str | None = None, offset: float = 0.16) -> None:
    """Legend under the axes, so it never hides a data point; `offset` (axes fractions)
    clears the x label, more on a shorter figure."""
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -offset), ncol=3, frameon=False,
              title=title)


# Set (svg_instead(True)) while a story is built for HTML (the report's, compare's, the
# dashboard's charts): each chart is drawn as SVG instead of PNG, from the same figure code,
# so both renderers show one chart (pts.report.renderers.html). A story built so cannot be
# laid out as PDF (pts.report.renderers.layout.SvgChart says so).
_SVG_INSTEAD: contextvars.ContextVar[bool] = contextvars.ContextVar("pts_svg_instead",
                                                                   default=False)


class Chart(bytes):
    """A chart's PNG bytes; drawn under svg_instead, no PNG bytes and its SVG text."""

    svg: str | None = None


def svg_instead(on: bool) -> contextvars.Token:
    return _SVG_INSTEAD.set(on)


def svg_instead_reset(token: contextvars.Token) -> None:
    _SVG_INSTEAD.reset(token)


def png(fig: Figure, tight: bool = True) -> bytes:
    if tight:
        fig.tight_layout()
    if _SVG_INSTEAD.get():
        text = io.StringIO()
        with mpl().rc_context({"svg.hashsalt": "snia-pts", "svg.fonttype": "none"}):
            fig.savefig(text, format="svg", metadata={"Date": None, "Creator": None})
        chart = Chart(b"")
        chart.svg = text.getvalue()
        return chart
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return Chart(buf.getvalue())


# Charts drawn in this process, by what drew them: the dashboard serves a run's report again and
# again, a report on readings builds its story more than once (pts.report.document), and the
# project's tests render one reference run many times; drawing is about half of a report's CPU
# (the reference run: 66 charts, 15 of its 28 s). In memory only, so no chart outlives the
# code that drew it; bounded. One lock around the look-ups and stores (not the drawing): the
# dashboard renders reports in several threads at once, and a chart evicted by one between
# another's look-up and its move to the end was a KeyError there.
_DRAWN: OrderedDict[tuple, bytes] = OrderedDict()
_DRAWN_MAX_BYTES = 64 * 2**20
_drawn_bytes = 0
_DRAWN_LOCK = threading.Lock()


def _key(fn: Callable, args: tuple, kwargs: dict) -> tuple | None:
    """What a chart is drawn from: the function, PNG or SVG, and its arguments' pickle (their
    whole content, so the same key is the same chart). None when the arguments cannot be
    pickled (a lambda, say): drawn every time."""
    try:
        blob = pickle.dumps((args, sorted(kwargs.items())), protocol=5)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None
    return (fn.__module__, fn.__qualname__, _SVG_INSTEAD.get(), hashlib.sha256(blob).digest())


def drawn_once(fn: Callable[..., bytes]) -> Callable[..., bytes]:
    """A chart function whose chart is drawn once per process for the same arguments: the
    bytes are those the function returns (a Chart, with its SVG under svg_instead)."""
    @functools.wraps(fn)
    def chart(*args, **kwargs) -> bytes:
        global _drawn_bytes
        key = _key(fn, args, kwargs)
        if key is not None:
            with _DRAWN_LOCK:
                if (found := _DRAWN.get(key)) is not None:
                    _DRAWN.move_to_end(key)
                    return found
        out = fn(*args, **kwargs)
        if key is not None:
            with _DRAWN_LOCK:
                if key not in _DRAWN:          # drawn by another thread meanwhile: kept once
                    _DRAWN[key] = out
                    _drawn_bytes += _size(out)
                while _drawn_bytes > _DRAWN_MAX_BYTES and len(_DRAWN) > 1:
                    _drawn_bytes -= _size(_DRAWN.popitem(last=False)[1])
        return out
    chart.draw_anew = fn       # the undecorated function (tests of the cache itself)
    return chart


def _size(chart: bytes) -> int:
    return len(chart) + len(getattr(chart, "svg", None) or "")


def wide_range(values: Sequence[float]) -> bool:
    """Log scale when the series span more than a decade (IOPS of 4 KiB vs 1024 KiB)."""
    positive = [v for v in values if v is not None and v > 0]
    return bool(positive) and max(positive) / min(positive) > 10


def set_log_y(ax) -> None:
    """Log y axis labelled 1-2-5 per decade in plain numbers (10,000 rather than 10^4)."""
    ax.set_yscale("log", nonpositive="mask")
    ax.yaxis.set_major_locator(mpl().LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(mpl().FuncFormatter(lambda v, _pos: fmt.num(v)))
    ax.yaxis.set_minor_formatter(mpl().NullFormatter())


def tick(value: float) -> str:
    """10,000 rather than 1e4; 100 rather than fmt.num's 100.0; 0.5, 2.5 as they are."""
    return f"{value:,.0f}" if value == round(value) else f"{value:g}"
