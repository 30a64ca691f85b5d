"""PTS IOPS test — PTS 2.0.2 IOPS test (pseudo-code p.26), PTS-E 1.1 (p.30).

Measures steady-state random IOPS over a 7 R/W-mix x 8 block-size matrix (56 test points,
1 minute each): purge, WIPC (2x ActiveRange of SEQ 128 KiB writes), then rounds until the
tracking variables (PTS 2.0.2: RND 4 KiB 0/100, 64 KiB 65/35, 1024 KiB 100/0; PTS-E 1.1:
4 KiB 0/100 only) are steady in the same 5-round window, at most 25 rounds.

Requires: --device (whole block device), --destructive, fio; root to open the device.
Typical duration at spec settings: WIPC (2x capacity / SEQ write speed) + 5 to 25 rounds of
56 min, i.e. about 5 h to 23 h 20 min.
"""

import pytest


@pytest.mark.pts("iops")
def test_iops(pts_outcome):
    assert pts_outcome.steady, pts_outcome.message
