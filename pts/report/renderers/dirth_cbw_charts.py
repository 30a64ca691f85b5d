"""DIRTH/CBW charts (pts-digest §7.7 P4-P14) as PNG bytes, in the style of
pts.report.renderers.chart_base."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pts.report.renderers.chart_base import (
    LINE_STYLES,
    STYLE,
    drawn_once,
    legend_below,
    new_figure,
    png,
    wide_range,
)
from pts.report.renderers.mpl import mpl
from pts.stored import fmt

Series = Mapping[str, tuple[Sequence[float], Sequence[float | None]]]


def _log(axis) -> None:
    axis.set_major_locator(mpl().LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(mpl().FuncFormatter(lambda v, _pos: fmt.num(v)))
    axis.set_minor_formatter(mpl().NullFormatter())


@drawn_once
def xy(series: Series, xlabel: str, ylabel: str, title: str, *, x_ticks=None,
       log_x: bool | None = None, log_y: bool | None = None) -> bytes:
    """One line per series {label: (xs, ys)}; an axis is logarithmic when its values span
    more than a decade (None) or when asked."""
    with mpl().rc_context(STYLE):
        fig, ax = new_figure()
        xs_all, ys_all = [], []
        for (label, (xs, ys)), style in zip(series.items(), LINE_STYLES * len(series),
                                            strict=False):
            pairs = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None]
            ax.plot([x for x, _ in pairs], [y for _, y in pairs], marker="o", markersize=3,
                    linewidth=1.1, linestyle=style, label=label)
            xs_all += [x for x, _ in pairs]
            ys_all += [y for _, y in pairs]
        if log_x if log_x is not None else wide_range(xs_all):
            ax.set_xscale("log", nonpositive="mask")
            _log(ax.xaxis)
        if log_y if log_y is not None else wide_range(ys_all):
            ax.set_yscale("log", nonpositive="mask")
            _log(ax.yaxis)
        else:
            ax.set_ylim(bottom=0)
        if x_ticks:
            ax.set_xticks(list(x_ticks), [str(t) for t in x_ticks])
            ax.xaxis.set_minor_formatter(mpl().NullFormatter())
        ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
        legend_below(ax)
        return png(fig)
