"""One wording for QoS levels on every page (pts.report.pages.qos_text): "n/r" for a level the I/O
count cannot resolve, never the slowest I/O in its place, and a footnote naming the counts."""

from pts.report.pages import qos_text
from pts.testdefs.qos_levels import QOS_LEVELS, needed_ios, percentile_rows
from pts.tools import histogram


def test_needed_ios_per_level():
    assert [needed_ios(p) for p in QOS_LEVELS] == [10_000, 100_000, 1_000_000]


def test_level_text():
    assert qos_text.level(123.456, True) == "123.5"
    assert qos_text.level(123.456, False) == "n/r"
    assert qos_text.level(None, True) == "n/a"


def test_short_at_the_boundary():
    assert qos_text.short(99_999, 99.999)
    assert not qos_text.short(100_000, 99.999)
    assert not qos_text.short(None, 99.999)       # unknown count: not called short


def test_note_names_each_level_and_the_fix():
    note = qos_text.nr_note(QOS_LEVELS, "a window point", "longer points (--point-seconds)")
    assert note.startswith("n/r = not resolvable")
    assert "99.99 % needs 10,000, 99.999 % needs 100,000, 99.9999 % needs 1,000,000" in note
    assert "a window point completed fewer" in note
    assert note.endswith("Longer points (--point-seconds) resolve it.")


def test_percentile_rows_never_pass_the_slowest_io_off_as_a_level():
    # 99,999 I/Os at 100 µs and one at 9 ms: 100,000 I/Os resolve 99.999 % (one I/O lies
    # above it: the level is 100 µs, not the 9 ms maximum); 99.9999 % is not resolvable.
    hist = {100_000: 99_999, 9_000_000: 1}
    rows = percentile_rows(hist, QOS_LEVELS, 9_000_000, histogram.percentile)
    by = {r["pct"]: r for r in rows}
    assert by[99.99]["resolvable"] and by[99.99]["us"] == 100.0
    assert by[99.999]["resolvable"] and by[99.999]["us"] == 100.0
    assert by[99.999]["ios"] == 100_000
    assert not by[99.9999]["resolvable"] and by[99.9999]["us"] is None
    assert by[99.9999]["ios_needed"] == 1_000_000
