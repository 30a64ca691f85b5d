"""Device health from smart-log records: what makes a test a device-health failure, and how
the step writes it into the outcome and the ledger."""

import pytest

from pts.device import health
from pts.procedure.rounds import Outcome
from pts.procedure.runner import health_verdict
from pts.results import records
from pts.results.ledger import Ledger


def rec(when, **counters) -> records.DeviceCounters:
    base = {"critical_warning": 0, "thermal_transitions": 0, "warning_temp_minutes": 0,
            "critical_temp_minutes": 0, "temperature_c": 40, "data_units_written": 100}
    return records.DeviceCounters(test="iops", when=when, round=None, source="smart-log",
                                  counters={**base, **counters})


def test_quiet_drive_has_no_problems():
    assert health.problems([rec("test start"), rec("after round 1", temperature_c=70,
                                                   data_units_written=900)]) == []


def test_critical_warning_at_any_step_is_named():
    found = health.problems([rec("test start"), rec("after WIPC", critical_warning=0x2),
                             rec("test end")])
    assert found == ["critical warning 0x02 (temperature threshold) at 1 of 3 steps, first "
                     "at after WIPC"]


@pytest.mark.parametrize("key, words", [
    ("thermal_transitions", "thermal management (throttling) transitions: +3"),
    ("warning_temp_minutes", "minutes above the warning temperature: +3"),
    ("critical_temp_minutes", "minutes above the critical temperature: +3")])
def test_throttling_during_the_test(key, words):
    found = health.problems([rec("test start", **{key: 5}), rec("test end", **{key: 8})])
    assert found == [f"{words} during the test"]


def test_counters_present_before_the_test_do_not_count():
    assert health.problems([rec("test start", thermal_transitions=9),
                            rec("test end", thermal_transitions=9)]) == []


class FakeRun:
    def __init__(self, tmp_path):
        self.ledger = Ledger(tmp_path / "ledger.jsonl")
        self.lines = []

    def write(self, text):
        self.lines.append(text)


def test_health_failure_replaces_the_outcome_and_keeps_the_spec_result(tmp_path):
    run = FakeRun(tmp_path)
    for r in (rec("test start"), rec("test end", critical_warning=0x1)):
        run.ledger.append(r)
    run.ledger.append(records.DeviceCounters(test="other", when="x", round=None,
                                             source="smart-log",
                                             counters={"critical_warning": 4}))
    steady = Outcome("steady", 7, 7, (3, 7), {}, "steady state reached at round 7")
    out = health_verdict(run, "iops", steady)
    assert out.status == health.HEALTH_FAILURE and not out.steady
    assert out.message == ("DEVICE HEALTH FAILURE (not a spec result): critical warning 0x01 "
                           "(available spare below threshold) at 1 of 2 steps, first at test "
                           "end. Spec outcome: steady state reached at round 7")
    assert run.lines == ["[pts iops] DEVICE HEALTH FAILURE: critical warning 0x01 (available "
                         "spare below threshold) at 1 of 2 steps, first at test end"]
    (tmp_path / "clean").mkdir()
    clean = FakeRun(tmp_path / "clean")
    assert health_verdict(clean, "iops", steady) is steady


# ---------------------------------------------------------------- resume fingerprint (NVMe)

def resume_state(tmp_path, units):
    from pts.results.resume import ResumeState
    found = tuple(rec(f"after round {i}", data_units_written=u)
                  for i, u in enumerate(units))
    return ResumeState(tmp_path, {}, found)


@pytest.fixture
def drive():
    from pts.device.identity import BlockDevice, Identity
    return BlockDevice("/dev/nvme9n1", "/dev/nvme9n1", "nvme9n1", (259, 9), 1_000_000_000_000,
                       512, 512, "nvme", False, Identity("m", "s", "f", "nvme id-ctrl"))


def now(units):
    return {"data_units_written": units, "page_size": 512000}


def test_resume_accepts_the_round_in_flight(tmp_path, drive):
    state = resume_state(tmp_path, [1000, 3000, 5000])     # 2000 units per round
    # 2 rounds + 1 % of capacity is accepted (returns, raises nothing); one unit more is
    # refused (test_resume_refuses_foreign_writes): the limit is exactly there.
    assert state.check_data_units(drive, now(5000 + 4000 + 19531)) is None


def test_resume_refuses_foreign_writes(tmp_path, drive):
    from pts.device.identity import DeviceError
    state = resume_state(tmp_path, [1000, 3000, 5000])
    with pytest.raises(DeviceError, match=r"cannot continue this run: 12.0 GB were written to "
                                          r"it since the run's last step \(at most 12.0 GB"):
        state.check_data_units(drive, now(5000 + 4000 + 19531 + 1))
    with pytest.raises(DeviceError, match="went backwards .*resets its counters at power-on"):
        state.check_data_units(drive, now(4999))


def test_resume_without_smart_records_checks_nothing(tmp_path, drive):
    from pts.device.identity import DeviceError
    # A counter that went backwards (1 after 5) is refused where there is something to
    # compare ...
    with pytest.raises(DeviceError, match=r"went backwards \(5 recorded, 1 now\)"):
        resume_state(tmp_path, [5]).check_data_units(drive, now(1))
    # ... and accepted where there is not: no smart-log record in the run, or no reading now.
    assert resume_state(tmp_path, []).check_data_units(drive, now(1)) is None
    assert resume_state(tmp_path, [5]).check_data_units(drive, None) is None
