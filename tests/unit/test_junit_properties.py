"""junit properties of a PTS test item (pts.procedure.properties), from outcomes built with
the steady-state check itself."""

from pathlib import Path

from pts.procedure import steady_state
from pts.procedure.rounds import Outcome


def outcome(values, status="steady", steady_round=7):
    ev = steady_state.check(values, list(range(3, 3 + len(values))))
    return Outcome(status, 7, steady_round, (3, 7), {"RND 4KiB 0/100": ev}, "msg")


def test_steady_outcome_properties():
    from pts.procedure.properties import junit_properties
    props = dict(junit_properties(outcome([100, 101, 99, 100, 100]), Path("/r/x")))
    assert props["pts.status"] == "steady" and props["pts.steady"] == "true"
    assert props["pts.rounds"] == "7" and props["pts.steady_round"] == "7"
    assert props["pts.window"] == "3..7" and props["pts.run_folder"] == "/r/x"
    assert props["pts.window_average[RND 4KiB 0/100]"] == "100"
    assert props["pts.window_range_pct[RND 4KiB 0/100]"] == "2.000"


def test_not_steady_outcome_has_empty_steady_round():
    from pts.procedure.properties import junit_properties
    props = dict(junit_properties(outcome([100, 80, 60, 40, 20], "not_steady", None)))
    assert props["pts.status"] == "not_steady" and props["pts.steady"] == "false"
    assert props["pts.steady_round"] == "" and "pts.run_folder" not in props
    assert props["pts.window_average[RND 4KiB 0/100]"] == "60"
