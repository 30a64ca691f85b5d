"""Overlaid plots of several runs (python -m pts compare), PNG bytes on the chart base,
pts.report.renderers.chart_base: one line per run over categories (block sizes, cells) or over
rounds / TGBW."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pts.report.renderers.chart_base import (
    LINE_STYLES,
    SHORT_SIZE_INCHES,
    STYLE,
    drawn_once,
    legend_below,
    new_figure,
    png,
    set_log_y,
    wide_range,
)
from pts.report.renderers.mpl import mpl


@drawn_once
def categorical(categories: Sequence[str], series: Mapping[str, Sequence[float | None]],
                xlabel: str, ylabel: str, title: str,
                size: tuple[float, float] = SHORT_SIZE_INCHES) -> bytes:
    """One line per run over categorical x (in the given order); missing values are gaps."""
    with mpl().rc_context(STYLE):
        fig, ax = new_figure(size)
        xs = range(len(categories))
        for (label, ys), style in zip(series.items(), LINE_STYLES * len(series),
                                      strict=False):
            ax.plot(list(xs), [float("nan") if v is None else v for v in ys], marker="o",
                    markersize=3, linewidth=1.2, linestyle=style, label=label)
        values = [v for ys in series.values() for v in ys if v is not None]
        if wide_range(values):
            set_log_y(ax)
        elif values:
            ax.set_ylim(bottom=0, top=max(values) * 1.1 or 1)
        ax.set_xticks(list(xs), list(categories),
                      rotation=30 if len(categories) > 5 else 0, fontsize=7)
        ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
        legend_below(ax, offset=0.32 if len(categories) > 5 else 0.28)
        return png(fig)


@drawn_once
def overlaid(series: Mapping[str, tuple[Sequence[float], Sequence[float | None]]],
             xlabel: str, ylabel: str, title: str, *, integer_x: bool = False,
             size: tuple[float, float] = SHORT_SIZE_INCHES) -> bytes:
    """One line per run {label: (xs, ys)} over a numeric x axis (rounds, TGBW)."""

    with mpl().rc_context(STYLE):
        fig, ax = new_figure(size)
        for (label, (xs, ys)), style in zip(series.items(), LINE_STYLES * len(series),
                                            strict=False):
            ax.plot(list(xs), [float("nan") if v is None else v for v in ys], marker="o",
                    markersize=2.5, linewidth=1.1, linestyle=style, label=label)
        values = [v for _, ys in series.values() for v in ys if v is not None]
        if wide_range(values):
            set_log_y(ax)
        elif values:
            ax.set_ylim(bottom=0, top=max(values) * 1.1 or 1)
        if integer_x:
            ax.xaxis.set_major_locator(mpl().MaxNLocator(integer=True))
        ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
        legend_below(ax, offset=0.28)
        return png(fig)
