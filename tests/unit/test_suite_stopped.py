"""A suite a test starts (tests.support.ptsrun, tests.support.campaign) never outlives the
step that started it (issue 38 §3): when kill_and_resume gives up, or a kill campaign's
wait times out (as when a test's deadline fires: pytest-timeout raises in the test), the
suite's process group is killed. The suite here is a real pytest run of a test that sleeps
(no device: nothing else runs)."""

from __future__ import annotations

import subprocess

import pytest

from tests.support import campaign, ptsrun

SLEEPS = "import time\n\n\ndef test_sleeps():\n    time.sleep(120)\n"


@pytest.fixture
def started(monkeypatch) -> list[subprocess.Popen]:
    """Every suite started meanwhile (killed after the test whatever it found)."""
    found: list[subprocess.Popen] = []
    real = ptsrun.start_suite

    def recording(*args, **kwargs):
        found.append(real(*args, **kwargs))
        return found[-1]
    monkeypatch.setattr(ptsrun, "start_suite", recording)
    monkeypatch.setattr(campaign, "start_suite", recording)
    yield found
    for proc in found:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_kill_and_resume_stops_the_suite_when_it_gives_up(tmp_path, started):
    (tmp_path / "test_sleeps.py").write_text(SLEEPS)
    with pytest.raises(AssertionError, match="not ready within"):
        ptsrun.kill_and_resume("", tmp_path / "reports", [], str(tmp_path / "test_sleeps.py"),
                               lambda folder: False, limit=3)
    assert len(started) == 1 and started[0].poll() is not None, "the suite still runs"


def test_a_kill_campaign_stops_the_suite_when_its_wait_times_out(tmp_path, started):
    (tmp_path / "test_sleeps.py").write_text(SLEEPS)
    with pytest.raises(subprocess.TimeoutExpired):
        campaign.kill_campaign("", tmp_path / "reports", [], str(tmp_path / "test_sleeps.py"),
                               kills=0, seed=1, timeout=3)
    assert len(started) == 1 and started[0].poll() is not None, "the suite still runs"
