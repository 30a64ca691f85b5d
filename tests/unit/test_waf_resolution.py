"""The WAF of a drive whose counters move in coarse units (pts.stored.waf.MIN_UNITS): the
Endurance Group log 09h counts media writes in units of 10^9 bytes and the SMART log host
writes in 512,000-byte units; an interval that moved either by fewer than 100 units has no
WAF, and the counters page says so with the writes and the resolution."""

from __future__ import annotations

from pathlib import Path

import pytest

from pts.device import media_writes
from pts.report.pages.counters import waf_block
from pts.results import records
from pts.stored import waf

GB = 1_000_000_000
SMART_UNIT = 512_000


def step(when, rnd, host_units, media_units, **keys):
    """An NVMe drive with an Endurance Group: SMART host units, log 09h media units."""
    media = keys.pop("media", media_writes.keys(media_units * GB, media_writes.ENDURANCE,
                                                unit=GB))
    return records.DeviceCounters(test="iops", when=when, round=rnd, source="smart-log",
                                  counters={"host_writes": host_units,
                                            "page_size": SMART_UNIT} | media)


def test_three_gb_between_readings_gives_no_waf_and_says_why():
    """3 GB host writes (5,860 SMART units) and 3 media units of 1 GB: the ratio 3/3.0
    could be anything from 2/3.0 to 4/3.0 at this resolution: not given, not 1.00."""
    found = waf.from_records([step("after purge", None, 1_000, 40),
                              step("test end", None, 1_000 + 5_860, 43)], Path("."))
    assert found.value is None and found.source == media_writes.ENDURANCE
    assert found.note.startswith("not given: 3 GB of host writes and 3 GB of media writes "
                                 "between the readings, the media counter at 1 GB resolution: "
                                 "under 100 units")
    (shown,) = waf_block(found)
    assert shown.text.startswith("WAF: not given: 3 GB of host writes")
    assert "0.00" not in shown.text and "1.00" not in shown.text


def test_the_threshold_is_100_units_of_each_counter():
    """Media moved 100 units (100 GB) over host 300,000 SMART units (153.6 GB): given,
    100 GB / 153.6 GB = 0.651041...; 99 units (99 GB): not given."""
    given = waf.from_records([step("after purge", None, 0, 0),
                              step("test end", None, 300_000, 100)], Path("."))
    assert given.value == pytest.approx(100 / 153.6) and given.note == ""
    short = waf.from_records([step("after purge", None, 0, 0),
                              step("test end", None, 300_000, 99)], Path("."))
    assert short.value is None and "under 100 units" in short.note
    # the host counter too: 99 SMART units (50.688 MB) against 1 B media resolution (OCP)
    ocp = media_writes.keys(50_688_000, media_writes.OCP)
    tiny = waf.from_records([step("after purge", None, 0, 0, media=ocp | {"media_bytes": 0}),
                             step("test end", None, 99, 0, media=ocp)], Path("."))
    assert tiny.value is None
    assert "the host counter at 512,000 B resolution: under 100 units" in tiny.note
    enough = waf.from_records([step("after purge", None, 0, 0, media=ocp | {"media_bytes": 0}),
                               step("test end", None, 100, 0, media=ocp)], Path("."))
    assert enough.value == pytest.approx(50_688_000 / 51_200_000)


def test_rounds_of_a_few_gb_are_listed_as_not_given():
    """Two rounds of 2 GB media each at 1 GB resolution: no per-round figure, the page says
    which rounds and why; the whole test (200 GB over 160 GB host) has its WAF, 1.25."""
    ledger = [step("after purge", None, 0, 0), step("after WIPC", None, 304_687, 196),
              step("after round 1", 1, 308_593, 198), step("after round 2", 2, 312_500, 200)]
    found = waf.from_records(ledger, Path("."))
    assert found.value == pytest.approx(200 * GB / (312_500 * SMART_UNIT))    # 200 / 160
    assert [(r.round, r.value) for r in found.per_round] == [(1, None), (2, None)]
    text = " ".join(f.text for f in waf_block(found))
    assert "WAF 1.25" in text and "Per round (where" not in text
    assert "Per-round WAF not given for rounds 1, 2: 2 GB of host writes and 2 GB of media " \
           "writes between the readings, the media counter at 1 GB resolution" in text


def test_an_endurance_record_from_before_the_unit_fix_is_read_in_gb():
    """Records written with 512,000-byte units for log 09h (no media_unit key): 1,851 units
    were stored as 947,712,000 bytes; read back as 1,851 x 10^9."""
    old = media_writes.keys(1_851 * SMART_UNIT, media_writes.ENDURANCE)
    old.pop("media_unit")
    fixed = waf.media({"host_writes": 0, "page_size": SMART_UNIT} | old)
    assert (fixed["media_bytes"], fixed["media_unit"]) == (1_851 * GB, GB)
    new = media_writes.keys(1_851 * GB, media_writes.ENDURANCE, unit=GB)
    assert waf.media(new) == new
