"""PTS Latency test — pts-digest §7.3 (PTS 2.0.2 / PTS-E 1.1 LAT test).

Measures steady-state response times at TOIO = 1 (TC 1 / QD 1) over 3 R/W mixes (100/0,
65/35, 0/100; outer loop) x 3 block sizes (8, 4, 0.5 KiB; inner loop), 9 points of 1
minute per round: purge, WIPC (2x ActiveRange of SEQ 128 KiB writes, also at TC 1 / QD 1),
then rounds until the average response time of RND 4 KiB 0/100 is steady over 5 rounds, at
most 25. Per point: average, maximum and 99.999 % response time (fio total latency, slat +
clat) and IOPS; mixed points also per direction.

Requires: --device (whole block device), --destructive, fio; root to open the device.
Typical duration at spec settings: WIPC (2x capacity of SEQ 128 KiB writes at QD 1) + 5 to
25 rounds of 9 min, i.e. 45 min to 3 h 45 min plus WIPC.
"""

import pytest


@pytest.mark.pts("latency")
def test_latency(pts_outcome):
    assert pts_outcome.steady, pts_outcome.message
