"""PTS Throughput test — pts-digest §7.2 (PTS 2.0.2 / PTS-E 1.1 TP test).

Measures steady-state SEQ throughput (decimal MB/s) at 100 % read and 100 % write, per block
size (PTS-E: 1024 KiB and 128 KiB; PTS-C: 1024 KiB), each a test of its own: purge, WIPC
(2x ActiveRange of SEQ writes at that block size, at the test's TC/QD), then rounds of a SEQ
read point and a SEQ write point until the write MB/s is steady over 5 rounds, at most 25.
`pytest pts/ -k throughput-128k` runs one block size.

Requires: --device (whole block device), --destructive, fio; root to open the device.
Typical duration at spec settings, per block size: WIPC (2x capacity / SEQ write speed) +
5 to 25 rounds of 2 min, i.e. 10 to 50 min plus WIPC; PTS-E runs two block sizes.
"""

import pytest


@pytest.mark.pts("throughput")      # one item per block size of the spec: [throughput-1024k]
def test_throughput(pts_outcome):
    assert pts_outcome.steady, pts_outcome.message
