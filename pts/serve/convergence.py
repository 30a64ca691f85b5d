"""The run page's convergence chart: the tracking variables of the test in flight (else the
last test) per round, as SVG drawn by the report's own chart code
(pts.report.renderers.charts.convergence), with the window its last round was judged on."""

from __future__ import annotations

from pts.report.renderers import chart_base, charts
from pts.serve import state
from pts.stored.model import RunView, TestResult


def judged_window(test: TestResult) -> tuple[tuple[int, int] | None, str]:
    """The test's measurement window once it ended, else the last window_rounds rounds (the
    ones the steady-state check looked at after the last round), and what to call it."""
    if test.end is not None:
        return test.window, "measurement window"
    size = test.steady_parameters and test.steady_parameters.window_rounds
    if isinstance(size, int) and len(test.rounds) >= size:
        last = test.rounds[-1]
        judged = "steady" if last.steady else "not steady"
        return (test.rounds[-size].number, last.number), f"last window: {judged}"
    return None, ""


def svg(run: RunView) -> str | None:
    """The chart's SVG text, or None while no round of a round-based test has ended."""
    test = state.current_test(run)
    if test is None or not test.rounds or not test.tracking:
        return None
    rounds = [r.number for r in test.rounds]
    series = {t.label: [r.tracking.get(t.label) for r in test.rounds] for t in test.tracking}
    window, name = judged_window(test)
    token = chart_base.svg_instead(True)
    try:
        chart = charts.convergence(rounds, series, window, "tracking value",
                                   f"{test.title}: tracking variables per round", name)
    finally:
        chart_base.svg_instead_reset(token)
    return chart.svg
