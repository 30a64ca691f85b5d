"""PTS Composite Block Size Workload test (CBW; ECW in PTS-E 1.1) — pts-digest §7.8.

DIRTH's procedure (pts/suite/test_dirth.py) with the JEDEC JESD219 enterprise composite
workload: R/W 40/60 in the test loop, 100 % writes in preconditioning and pre-writes, the
block-size mix 0.5K..64K as fio bssplit, and the access skew 50 % of I/Os to the first 5 % of
LBAs, 30 % to the next 15 %, 20 % to the rest (fio random_distribution=zoned:50/5:30/15:20/80).
Block sizes below the logical sector size (a 4Kn drive) are left out and declared.

Requires: --device, --destructive, fio. Same shortening options and duration as DIRTH.
"""

import pytest


@pytest.mark.pts("cbw")
def test_cbw(pts_outcome):
    assert pts_outcome.steady, pts_outcome.message
