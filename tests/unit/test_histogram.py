"""Latency percentiles from fio's histograms, and decimal MB/s, checked against an output
recorded with this machine's fio 3.33: RND 4 KiB 65/35 at QD 1 for 6 s on a loop device,
`--output-format=json+`, lat_percentiles=1, percentile_list=50:99:99.9:99.99:99.999
(tests/data/fio-3.33-jsonplus-randrw-65-35-4k-qd1.json)."""

import json

import pytest

from pts.testdefs import fields as point_fields
from pts.tools import histogram
from pts.tools.fio import parse_output, summarize
from tests.support.helpers import DATA

RECORDED = DATA / "fio-3.33-jsonplus-randrw-65-35-4k-qd1.json"


@pytest.fixture(scope="module")
def doc():
    return json.loads(RECORDED.read_text())


@pytest.fixture(scope="module")
def summary():
    return summarize(parse_output(RECORDED.read_text()))


def test_bin_values_are_fio_bins(doc):
    """Every bin fio printed is the midpoint of one of its 1856 bins, as bin_value gives."""
    values = {histogram.bin_value(i) for i in range(histogram.PLAT_NR)}
    for ddir in ("read", "write"):
        for kind in ("lat_ns", "clat_ns"):
            assert {int(k) for k in doc["jobs"][0][ddir][kind]["bins"]} <= values
    # Below 128 ns one bin per ns; then 64 bins per power of two, value at the midpoint.
    assert [histogram.bin_value(i) for i in (0, 127, 128, 129, 192)] == [0, 127, 129, 131, 258]


def test_percentiles_of_one_direction_equal_fios(doc):
    for ddir in ("read", "write"):
        lat = doc["jobs"][0][ddir]["lat_ns"]
        bins = histogram.parse_bins(lat["bins"])
        assert histogram.total(bins) == doc["jobs"][0][ddir]["total_ios"]
        for key, value in lat["percentile"].items():
            assert histogram.percentile(bins, float(key)) == value, (ddir, key)


def test_mixed_99_999_by_hand(summary):
    """Worked by hand from the bins. Reads: 164,441 I/Os, writes: 88,772, together
    N = 253,213. 99.999 % of N = 253,210.47, so the percentile is the bin where the running
    count (ascending) first reaches 253,211: the 3rd-largest response time. The largest
    bins of both directions merged: 10,944,512 ns (1 read), 7,438,336 ns (1 write),
    5,603,328 ns (1 read), 4,947,968 ns (1 read) ... -> 5,603,328 ns.
    (fio itself reports reads 5,603,328 and writes 7,438,336: neither is the mixed figure.)"""
    assert summary.read.total_ios == 164441 and summary.write.total_ios == 88772
    assert summary.lat_percentile_ns(99.999) == 5603328
    assert summary.read.lat_percentile_ns(99.999) == 5603328
    assert summary.write.lat_percentile_ns(99.999) == 7438336
    # 100 % is the largest bin; the exact maximum fio measured lies inside that bin.
    assert summary.lat_percentile_ns(100) == 10944512
    assert abs(summary.lat_max_ns - 10944512) / 10944512 < 1 / 128


def test_percentile_is_of_total_latency_not_clat(doc, summary):
    """The PTS response time includes submission: the lat_ns histogram is used, whose median
    here is twice the completion-only one."""
    clat = histogram.parse_bins(doc["jobs"][0]["read"]["clat_ns"]["bins"])
    assert summary.read.lat_percentile_ns(50) == 12864
    assert histogram.percentile(clat, 50) == doc["jobs"][0]["read"]["clat_ns"]["percentile"][
        "50.000000"] < 12864


def test_point_fields_cap_the_percentile_at_the_maximum(summary):
    fields = point_fields.latency(summary, 99.999)
    assert fields["lat_percentile_us"] == pytest.approx(5603.328)
    assert fields["write_lat_percentile_us"] == pytest.approx(7436.022)   # bin 7,438,336 capped
    assert fields["read_ios"] + fields["write_ios"] == fields["ios"] == 253213
    assert point_fields.capped(12.0, 10.0) == 10.0 and point_fields.capped(None, 1.0) is None


def test_mb_per_s_is_decimal_not_kib(doc, summary):
    """fio's bw is KiB/s (1024 B); PTS MB/s is 10^6 B/s (pts-digest §7.2, §11.12)."""
    read = doc["jobs"][0]["read"]
    assert summary.read.bw_bytes == read["bw_bytes"]
    assert summary.mbps == pytest.approx((read["bw_bytes"] + doc["jobs"][0]["write"][
        "bw_bytes"]) / 1e6)
    kib_per_s = read["bw"] + doc["jobs"][0]["write"]["bw"]
    assert summary.mbps == pytest.approx(kib_per_s * 1024 / 1e6, rel=1e-3)
    mib_per_s = kib_per_s / 1024          # what tools that "divide by 1024" print as MB/s
    assert summary.mbps / mib_per_s == pytest.approx(1.048576, rel=1e-3)
    fields = point_fields.throughput(summary)
    assert fields["read_mbps"] == pytest.approx(read["bw_bytes"] / 1e6)


def test_empty_and_bad_input():
    assert histogram.percentile({}, 99) is None and histogram.maximum({}) is None
    with pytest.raises(ValueError):
        histogram.percentile({1: 1}, 0)
    with pytest.raises(ValueError):
        histogram.bin_value(histogram.PLAT_NR)
    assert histogram.from_counts([0, 2, 0, 1]) == {1: 2, 3: 1}
