"""PTS Write Saturation test (WSAT) — pts-digest §7.4 (PTS-E 1.1 / PTS 2.0.2 WSAT).

Measures how RND 4 KiB write performance moves from fresh out of the box (FOB) to steady
state under continuous writes: purge, no preconditioning, then RND 4 KiB 100 % writes at
the test's TC/QD (E: 4/32, C: 2/16) in one fio run until 4x user capacity is written or 24 h
pass, whichever comes first (--wsat-fills, --wsat-hours; other values are declared
deviations). One sample per point interval (60 s): IOPS, average / maximum / 99.999 %
response time, TGBW and drive fills; the 5-sample steady-state rule is evaluated and the
FOB / steady-state IOPS ratio reported. Steady state is not required: the test passes when
it ran to its stop condition.

Requires: --device (whole block device), --destructive, fio; root to open the device.
Typical duration at spec settings: 4 x capacity / the drive's steady RND 4 KiB write rate,
at most 24 h (e.g. a 1.92 TB drive at 50k IOPS: about 10 h).
"""

import pytest

from pts.results.records import COMPLETE


@pytest.mark.pts("wsat")      # `-k wsat` and `-k saturation` both select it
def test_wsat(pts_outcome):
    """Steady state is not required: the test passes when it ran to its stop condition."""
    assert pts_outcome.status == COMPLETE and pts_outcome.rounds >= 1, pts_outcome.message
