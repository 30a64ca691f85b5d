"""The capture's window in Unix time (its descriptor's started_unix + seconds) is the time it
traced, for a source whose start and stop take a while (a remote one: an ssh round trip each).
Stop 55's CI: started_unix was read before start(), so the window ended early by the start's
delay and a workload that ended inside the capture read as ending after it."""

from __future__ import annotations

import time

from pts.workload.capture import loop

DELAY_S = 0.25          # each of start() and stop(): much more than the test's own steps


class SlowSource:
    """A source without events whose tracing turns on (and off) DELAY_S into the call, on the
    host's own CLOCK_MONOTONIC; it notes the Unix times it truly traced between."""

    ncpus = 1
    kernel = "test"

    def __init__(self):
        self.on_unix = self.off_unix = None

    def start(self) -> int:
        time.sleep(DELAY_S)
        self.on_unix = time.time()
        return time.clock_gettime_ns(time.CLOCK_MONOTONIC)

    def stop(self) -> None:
        time.sleep(DELAY_S)
        self.off_unix = time.time()

    def clock(self) -> int:
        return time.clock_gettime_ns(time.CLOCK_MONOTONIC)

    def lost(self) -> int:
        return 0

    def comms(self) -> dict[str, str]:
        return {}

    def pages_to(self, files: list[int], partial: bool) -> int:
        return 0


def test_the_window_is_the_time_traced_whatever_start_and_stop_take(tmp_path):
    src = SlowSource()
    asked = time.time()
    # stopped as a SIGINT stops it (the tests end their captures so), well before its bound
    got = loop.spool(src, tmp_path / "s.spool", {}, {"device": "/dev/x"}, seconds=60,
                     step_s=0.1, poll_s=0.01,
                     stop=lambda: "SIGINT" if time.time() > asked + DELAY_S + 0.2 else None)
    assert got.stopped_by == "SIGINT"
    # issue_ns 0 is when tracing turned on (to the clock reads' few µs), not a call earlier
    assert abs(got.started_unix - src.on_unix) < DELAY_S / 5, (got.started_unix - src.on_unix)
    # the window ends no earlier than the tracing did (stopped_at is read after stop())
    end = got.started_unix + got.seconds
    assert src.off_unix <= end < src.off_unix + DELAY_S / 5, (end - src.off_unix)
