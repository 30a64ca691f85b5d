"""Charts drawn once per process for the same arguments (chart_base.drawn_once): the cached
bytes are the bytes a fresh drawing gives, other data is drawn anew, and PNG and SVG of the
same data are two charts."""

from pts.report.renderers import chart_base, charts

ROUNDS = [1, 2, 3, 4, 5, 6]
SERIES = {"4KiB 100/0": [900.0, 700.0, 610.0, 600.0, 605.0, 598.0]}


def draw(series=SERIES, title="IOPS per round"):
    return charts.convergence(ROUNDS, series, (2, 6), "IOPS", title)


def test_the_same_data_gives_the_chart_drawn_the_first_time_and_its_bytes_are_a_fresh_drawing():
    first = draw()
    again = draw({k: list(v) for k, v in SERIES.items()})      # equal data, other objects
    assert again is first
    assert bytes(first) == bytes(charts.convergence.draw_anew(ROUNDS, SERIES, (2, 6), "IOPS",
                                                              "IOPS per round"))


def test_other_data_or_another_title_is_drawn_anew():
    first = draw()
    moved = draw({"4KiB 100/0": [900.0, 700.0, 610.0, 600.0, 605.0, 597.0]})
    titled = draw(title="IOPS per round (again)")
    assert moved is not first and bytes(moved) != bytes(first)
    assert titled is not first and bytes(titled) != bytes(first)


def test_png_and_svg_of_the_same_data_are_two_charts():
    png = draw()
    token = chart_base.svg_instead(True)
    try:
        svg = draw()
    finally:
        chart_base.svg_instead_reset(token)
    assert svg is not png and svg.svg and svg.svg.startswith("<?xml") and bytes(png)


def test_arguments_that_cannot_be_pickled_are_drawn_every_time():
    calls = []

    @chart_base.drawn_once
    def chart(label, how):
        calls.append(label)
        return chart_base.Chart(label.encode())

    chart("a", lambda: 1)
    chart("a", lambda: 1)
    chart("b", 2)
    chart("b", 2)
    assert calls == ["a", "a", "b"]


def test_the_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(chart_base, "_DRAWN_MAX_BYTES", 10)

    @chart_base.drawn_once
    def chart(label):
        return chart_base.Chart(label.encode() * 4)

    for label in ("aa", "bb", "cc"):
        chart(label)
    assert chart_base._drawn_bytes <= 10 and len(chart_base._DRAWN) >= 1


def test_a_look_up_is_not_undone_by_another_thread(monkeypatch):
    """The dashboard renders reports in several threads: while one thread looks a chart up,
    another that draws and stores (evicting the looked-up one: the cache holds one chart
    here) waits for it. Without the cache's lock the other thread evicted the chart between
    the look-up and its move to the end: a KeyError in that thread's request. Decided by the
    other thread reaching the lock (it found it held and waits), not by its not finishing
    within a time."""
    import threading
    from collections import OrderedDict

    from tests.support.contended import WatchedLock

    monkeypatch.setattr(chart_base, "_DRAWN_MAX_BYTES", 1)
    monkeypatch.setattr(chart_base, "_drawn_bytes", 0)
    lock = WatchedLock()
    monkeypatch.setattr(chart_base, "_DRAWN_LOCK", lock)      # the cache's lock, watched
    other_done = threading.Event()

    @chart_base.drawn_once
    def chart(label):
        return chart_base.Chart(label.encode())

    def other():
        chart("b")                    # stored, and "a" evicted to stay within the bound
        other_done.set()
        lock.turn.set()

    class Interleaved(OrderedDict):
        hooked = False

        def move_to_end(self, key, last=True):       # a hit: found, not yet returned
            if not Interleaved.hooked:
                Interleaved.hooked = True
                threading.Thread(target=other, daemon=True).start()
                # the other thread waits at the lock, or (no lock) it has finished: a hang
                # bound only
                assert lock.turn.wait(120)
                assert not other_done.is_set(), "another thread changed the cache mid-look-up"
                assert lock.waited == 1 and len(self) == 1
            super().move_to_end(key, last)

    monkeypatch.setattr(chart_base, "_DRAWN", Interleaved())
    first = chart("a")
    assert chart("a") is first and Interleaved.hooked        # the look-up, interleaved
    assert other_done.wait(120) and list(chart_base._DRAWN) != [] and \
        chart_base._drawn_bytes == sum(len(c) for c in chart_base._DRAWN.values())
