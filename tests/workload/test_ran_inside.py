"""The guard of the capture tests that compare a capture with what a workload did
(tests.support.apps.ran_inside): a workload inside the capture's window passes; one that
started before it or ended after it fails, saying which and by how much, from the capture
file's own descriptor (started_unix, seconds)."""

from __future__ import annotations

import pytest

from pts.workload.capture.events import CaptureInfo, CaptureWriter
from tests.support.apps import ran_inside

START = 1.7e9


@pytest.fixture
def capture(tmp_path):
    """An empty 3 s capture that started at START (Unix time)."""
    path = tmp_path / "cap.parquet"
    with CaptureWriter(path) as w:
        w.close(CaptureInfo(source="tracefs", device="/dev/x", started_unix=START,
                            seconds=3.0, events=0, lost_events=0))
    return path


def test_a_workload_inside_the_window_passes(capture):
    ran_inside(capture, START + 0.4, START + 2.9, "fio")
    ran_inside(capture, START, START + 3.0, "fio")              # the edges are inside


def test_a_workload_that_outlasted_the_capture_fails_saying_so(capture):
    with pytest.raises(AssertionError) as err:
        ran_inside(capture, START + 0.4, START + 3.25, "pgbench -T 3")
    assert str(err.value) == (
        "pgbench -T 3 ran from +0.40 s to +3.25 s of the capture cap.parquet, whose window "
        "is 0 to 3 s: the workload did not end inside the capture (a slow or loaded "
        "machine?), so the capture is not of the whole workload and nothing measured from "
        "it can be compared")


def test_a_workload_that_started_before_the_capture_fails_saying_so(capture):
    with pytest.raises(AssertionError, match=r"ran from -0.20 s .* did not start inside"):
        ran_inside(capture, START - 0.2, START + 1.0, "fio")
