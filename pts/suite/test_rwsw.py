"""SNIA RWSW tests (Real World Storage Workload PTS 1.0.7; rwsw-digest §5) on the Applied
Test Workload given with --workload FILE (`python -m pts workload CAPTURE -o FILE`, or
written by hand: docs/workload.md). Select them with `-k rwsw`, one of them by its name
(`-k rwsw-wsat`: pts.session.plugin adds each PTS test's name to its item's keywords).

- Multi-WSAT (rwsw-wsat): purge, then the whole ATW from FOB, all streams at once, one
  point per round at the ATW's OIO, IOPS tracked and the steady-state check shown every
  round, until the WSAT stop rule (4 drive fills or 24 h; --wsat-fills / --wsat-hours).
  Steady state is not required: the test passes when it ran to its stop rule.
- Individual Streams-WSAT (rwsw-streams): purge, then every stream alone in turn each round
  at the ATW's OIO, until every stream's IOPS is steady (or max rounds).
- Replay-Native (rwsw-replay): purge, the ATW to steady state, then the capture's steps
  ([[step]] tables of the ATW) in order, each at its own mix and OIO for its length x
  --time-scale; passes when the preconditioning was steady and every step ran.
- DIRTH with the ATW (rwsw-dirth): purge, the ATW at max OIO to steady state, then the
  TC x QD demand rounds (highest OIO first) to steady state, the operating points
  (MaxIOPS, MidIOPS, MinIOPS) with their response-time histograms.

Every point records each stream's achieved share of I/Os beside its target (fio's per-job
results); a stream outside [rwsw_atw] share_tolerance_pct is said on the console and
recorded as a deviation. Requires: --device, --destructive, --workload, fio, root.
"""

import pytest

from pts.results.records import COMPLETE


def _needs_workload(request) -> None:
    if not request.config.option.workload:
        pytest.skip("RWSW tests need an Applied Test Workload: give --workload FILE "
                    "(python -m pts workload CAPTURE -o FILE, or docs/workload.md)")


@pytest.fixture(scope="session")
def rwsw_workload(request):
    """Skips before the session's run is made (a session fixture, asked first)."""
    _needs_workload(request)


@pytest.mark.pts("rwsw-wsat")
def test_rwsw_wsat(rwsw_workload, pts_outcome):
    """Passes when it ran to its stop rule (drive fills or time), as the PTS WSAT."""
    assert pts_outcome.status == COMPLETE and pts_outcome.rounds >= 1, pts_outcome.message


@pytest.mark.pts("rwsw-streams")
def test_rwsw_streams(rwsw_workload, pts_outcome):
    assert pts_outcome.steady, pts_outcome.message


@pytest.mark.pts("rwsw-replay")
def test_rwsw_replay(rwsw_workload, pts_outcome):
    """Passes when the preconditioning was steady and every capture step ran."""
    assert pts_outcome.status == COMPLETE and pts_outcome.rounds == 1, pts_outcome.message


@pytest.mark.pts("rwsw-dirth")
def test_rwsw_dirth(rwsw_workload, pts_outcome):
    assert pts_outcome.steady or pts_outcome.status == COMPLETE, pts_outcome.message
