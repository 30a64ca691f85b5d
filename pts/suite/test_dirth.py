"""PTS Demand Intensity / Response Time Histogram test (DIRTH) — pts-digest §7.7.

Purge (no WIPC); preconditioning rounds of RND 0/100 at TC32/QD32 until steady state
(ledger test dirth-precondition); demand-variation rounds until the IOPS at TC32/QD32 is
steady (ledger test dirth): a 5-minute pre-write, then TC 32,16,8,6,4,2,1 x QD
32,16,8,6,4,2,1 = 49 one-minute points at the test mix (spec file: "OLTP", RND 8 KiB 65/35),
each with IOPS, ART, MRT, 99.9..99.9999 % response times and system CPU %; then the
operating points MaxIOPS (highest IOPS with ART under the spec file's ceiling), MidIOPS and
MinIOPS (TC1/QD1), each a pre-write at its TC/QD and a response-time histogram capture.

Requires: --device, --destructive, fio. Shortened (declared): --dirth-thread-counts,
--dirth-queue-depths, --point-seconds, --max-rounds, --time-scale. Typical duration at spec
settings: 10.5 h (both phases steady after 5 rounds) to 38.5 h (25 rounds each); --dry-run
prints the estimate for the chosen options.
"""

import pytest


@pytest.mark.pts("dirth")
def test_dirth(pts_outcome):
    assert pts_outcome.steady, pts_outcome.message
