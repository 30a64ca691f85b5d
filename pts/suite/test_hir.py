"""PTS Host Idle Recovery test (HIR) — pts-digest §7.5 (PTS 2.0.2, PTS-E 1.1).

Does idle time let the drive's background garbage collection restore write IOPS? Purge (no
WIPC), RND 4 KiB writes at the test TC/QD to steady state (the baseline), then five wait
states of 360 x (5 s write + 5/10/15/25/50 s idle), each followed by 360 x 5 s writes
(return to baseline). IOPS per write interval; mean per wait state against the baseline.

Requires: --device (whole block device), --destructive, fio; root to open the device.
Typical duration at spec settings: preconditioning (5 to 25 rounds) + 15.5 h.
Shorter: --hir-repetitions N, --time-scale F (declared deviations).
"""

import pytest


@pytest.mark.pts("hir")
def test_hir(pts_outcome):
    assert pts_outcome.status == "complete", pts_outcome.message
