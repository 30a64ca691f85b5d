"""The report's plots as PNG bytes (or SVG under chart_base.svg_instead), drawn on the chart
base (pts.report.renderers.chart_base: size, style, output)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pts.procedure.steady_state import SteadyStateResult
from pts.report.renderers.chart_base import (
    LINE_STYLES,
    SHORT_SIZE_INCHES,
    STYLE,
    WINDOW_SHADE,
    drawn_once,
    legend_below,
    new_figure,
    png,
    set_log_y,
    wide_range,
)
from pts.report.renderers.mpl import mpl
from pts.stored import fmt


@drawn_once
def convergence(rounds: Sequence[int], series: Mapping[str, Sequence[float | None]],
                window: tuple[int, int] | None, ylabel: str, title: str,
                window_name: str = "measurement window") -> bytes:
    """Tracking variables per round (one line each), the measurement window shaded."""
    with mpl().rc_context(STYLE):
        fig, ax = new_figure()
        if window is not None:
            ax.axvspan(window[0] - 0.5, window[1] + 0.5, color=WINDOW_SHADE, alpha=0.6,
                       label=f"{window_name} (rounds {window[0]}..{window[1]})")
        for label, values in series.items():
            ys = [float("nan") if v is None else v for v in values]
            ax.plot(rounds, ys, marker="o", markersize=3, linewidth=1.2, label=label)
        if wide_range([v for vals in series.values() for v in vals]):
            set_log_y(ax)
        ax.xaxis.set_major_locator(mpl().MaxNLocator(integer=True))
        ax.set(xlabel="Round", ylabel=ylabel, title=title)
        legend_below(ax)
        return png(fig)


@drawn_once
def measurement_window(ev: SteadyStateResult, label: str, ylabel: str) -> bytes:
    """One tracking variable over its window: values, average, 110 % / 90 % of the average,
    and the least-squares line y = slope * round + intercept from the stored evidence."""
    with mpl().rc_context(STYLE):
        fig, ax = new_figure()
        xs = list(ev.rounds)
        ax.plot(xs, list(ev.values), marker="o", linewidth=1.4, label=label)
        ax.axhline(ev.average, color="black", linewidth=1.0,
                   label=f"average {fmt.num(ev.average)}")
        ax.axhline(1.1 * ev.average, color="grey", linestyle="--", linewidth=1.0,
                   label="110 % of average")
        ax.axhline(0.9 * ev.average, color="grey", linestyle=":", linewidth=1.0,
                   label="90 % of average")
        fit = [ev.slope * x + ev.intercept for x in xs]
        ax.plot(xs, fit, color="tab:red", linewidth=1.2,
                label=f"least-squares fit y = {fmt.num(ev.slope)}·R "
                      f"{'-' if ev.intercept < 0 else '+'} {fmt.num(abs(ev.intercept))}")
        ax.set_xticks(xs)
        ax.set(xlabel="Round", ylabel=ylabel,
               title=f"Steady state measurement window: {label}, rounds "
                     f"{ev.window_first}..{ev.window_last}")
        legend_below(ax)
        return png(fig)


@drawn_once
def interval_waf(rounds: Sequence[int], values: Sequence[float | None],
                 window: tuple[int, int] | None, title: str) -> bytes:
    """Write amplification of each round's interval (SHORT_SIZE_INCHES), with the test's
    measurement window shaded as on the convergence plot, so the two can be compared."""
    with mpl().rc_context(STYLE):
        fig, ax = new_figure(SHORT_SIZE_INCHES)
        if window is not None:
            ax.axvspan(window[0] - 0.5, window[1] + 0.5, color=WINDOW_SHADE, alpha=0.6,
                       label=f"measurement window (rounds {window[0]}..{window[1]})")
        ax.plot(list(rounds), [float("nan") if v is None else v for v in values], marker="o",
                markersize=3, linewidth=1.2, color="tab:purple",
                label="write amplification in the round (NAND / host writes)")
        # WAF is never below 1 for a drive that writes what the host sends; starting the axis
        # at 0 keeps a flat line from looking like a swing.
        ax.set_ylim(bottom=0)
        ax.xaxis.set_major_locator(mpl().MaxNLocator(integer=True))
        ax.set(xlabel="Round", ylabel="WAF", title=title)
        legend_below(ax, offset=0.3)
        return png(fig)


@drawn_once
def matrix_2d(block_sizes: Sequence[int], rw_mixes: Sequence[str],
              values: Mapping[tuple[str, int], float | None], ylabel: str, title: str) -> bytes:
    """y (log) against block size (categorical, in the spec's loop order), one line per R/W
    mix; N/A cells are gaps, never zeros."""
    with mpl().rc_context(STYLE):
        fig, ax = new_figure()
        xs = range(len(block_sizes))
        for mix in rw_mixes:
            ys = [values.get((mix, bs)) for bs in block_sizes]
            ax.plot(xs, [float("nan") if v is None else v for v in ys], marker="o",
                    markersize=3, linewidth=1.2, label=f"R/W {mix}")
        if any(v is not None and v > 0 for v in values.values()):
            set_log_y(ax)
        ax.set_xticks(list(xs), [fmt.block_size(bs) for bs in block_sizes])
        ax.set(xlabel="Block size", ylabel=ylabel, title=title)
        legend_below(ax, "R/W mix (read/write %)")
        return png(fig)


@drawn_once
def lines(series: Mapping[str, tuple[Sequence[float], Sequence[float | None]]], xlabel: str,
          ylabel: str, title: str, *, log_y: bool | None = None,
          span: tuple[float, float] | None = None, span_label: str = "",
          points: Mapping[str, tuple[float, float]] | None = None) -> bytes:
    """One line per series {label: (xs, ys)} over a numeric x axis (time, GB, drive fills);
    `span` shades an x range (a measurement window); `points` adds single marked points
    {label: (x, y)} (a partial last sample). log_y None: log scale when the data span more
    than a decade."""
    with mpl().rc_context(STYLE):
        fig, ax = new_figure()
        if span is not None:
            ax.axvspan(span[0], span[1], color=WINDOW_SHADE, alpha=0.6, label=span_label)
        # Line styles differ too, so that equal series (a 99.999 % that is the maximum)
        # stay visible on top of each other.
        for (label, (xs, ys)), style in zip(series.items(), LINE_STYLES * len(series),
                                            strict=False):
            ax.plot(list(xs), [float("nan") if v is None else v for v in ys], marker="o",
                    markersize=2.5, linewidth=1.1, linestyle=style, label=label)
        for label, (x, y) in (points or {}).items():
            ax.plot([x], [y], marker="D", markersize=5, linestyle="none", color="black",
                    label=label)
        values = [v for _, ys in series.values() for v in ys if v is not None]
        if log_y if log_y is not None else wide_range(values):
            set_log_y(ax)
        else:
            ax.set_ylim(bottom=0)
        ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
        legend_below(ax)
        return png(fig)

