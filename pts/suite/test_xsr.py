"""PTS Cross Stimulus Recovery test (XSR) — pts-digest §7.6 (PTS 2.0.2, PTS-E 1.1).

How the drive moves between sustained large SEQ writes and small RND writes and back: purge
(no WIPC), Access Group 1 SEQ 1024 KiB W 8 h, Group 2 RND 8 KiB W 6 h, Group 3 SEQ 1024 KiB
W 8 h; TP, ART and MRT per one-minute interval; recovery time per transition (the rule is in
the spec file's [xsr] table).

Requires: --device (whole block device), --destructive, fio; root to open the device.
Typical duration at spec settings: 22 h. Shorter: --time-scale F (declared deviation).
"""

import pytest


@pytest.mark.pts("xsr")
def test_xsr(pts_outcome):
    assert pts_outcome.status == "complete", pts_outcome.message
