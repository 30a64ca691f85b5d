"""The server's BMC as a power source (pts.power.bmc, pts.tools.ipmitool, pts.tools.redfish)
against real servers on loopback, started once for the module (tests/support/
bmc_simulators.py): OpenIPMI's ipmi_sim and sushy-tools' Redfish emulator (sushy-static).

ipmi_sim implements no DCMI: its answer to DCMI's Get Power Reading is C1h (Invalid
command), which the source says with the fix (sensor=NAME); its power sensor is read."""

from __future__ import annotations

import json
import time

import pytest

from pts.power.bmc import IpmiSource, RedfishSource
from pts.power.source import SERVER, PowerSourceError, Recorder
from pts.power.spec import build, check, parse
from pts.tools import ipmitool, redfish
from tests.support import bmc_simulators, readings

pytestmark = pytest.mark.needs("ipmi_sim", "ipmitool")
SENSOR = "Power In"                 # tests/data/ipmi_sim/bmc.emu: 220 W


@pytest.fixture(scope="module")
def bmc(tmp_path_factory):
    with bmc_simulators.ipmi_sim(tmp_path_factory.mktemp("ipmi_sim")) as (proc, port, pw):
        yield ipmitool.Bmc("127.0.0.1", port, bmc_simulators.USER, str(pw), cipher=3), proc


@pytest.fixture(scope="module")
def redfish_service(tmp_path_factory):
    with bmc_simulators.redfish_static(tmp_path_factory.mktemp("redfish")) as served:
        yield served


def test_ipmi_sim_has_no_dcmi_and_the_source_says_the_fix(bmc):
    source = IpmiSource(bmc[0])
    with pytest.raises(PowerSourceError, match=r"no DCMI power reading .*C1h.*sensor=NAME"):
        source.start()


def test_ipmi_power_sensor_read_with_the_password_file(bmc):
    source = IpmiSource(bmc[0], sensor=SENSOR)
    source.start()
    (sample,) = source.read()
    assert sample.value == 220.0
    assert source.info.measures == SERVER and "sensor 'Power In'" in source.info.detail


def test_ipmi_wrong_password_fails_clearly(bmc, tmp_path):
    wrong = tmp_path / "pw"
    wrong.write_text("not-it\n")
    source = IpmiSource(ipmitool.Bmc("127.0.0.1", bmc[0].port, "admin", str(wrong), 3),
                        sensor=SENSOR)
    with pytest.raises(PowerSourceError, match="sensor reading 'Power In' failed"):
        source.start()


def test_ipmi_from_the_power_option_and_its_check(bmc):
    b = bmc[0]
    (spec,) = parse(f"ipmi:127.0.0.1:{b.port},user=admin,password-file={b.password_file},"
                    f"sensor={SENSOR},cipher=3,interval=0.5")
    source = build(spec)
    assert source.info.interval_s == 0.5 and source.info.name.startswith("ipmi:127.0.0.1:")
    assert check([source]) == [(source.info.name, "")]
    (nodcmi,) = parse(f"ipmi:127.0.0.1:{b.port},user=admin,password-file={b.password_file},"
                      f"cipher=3")
    ((_, why),) = check([build(nodcmi)])
    assert "no DCMI power reading" in why


def test_redfish_power_and_environment_metrics(redfish_service):
    _, url, _ = redfish_service
    power = RedfishSource(redfish.Service(f"{url}/redfish/v1/Chassis/1"))
    power.start()
    assert power.read()[0].value == 344.0                       # PowerConsumedWatts
    watts, where = redfish.read_watts(redfish.Service(f"{url}/redfish/v1/Chassis/2"))
    assert (watts, where) == (512.5, f"{url}/redfish/v1/Chassis/2/EnvironmentMetrics")
    with pytest.raises(PowerSourceError, match="reports no power.*neither linked"):
        RedfishSource(redfish.Service(f"{url}/redfish/v1/Chassis/3")).start()
    with pytest.raises(PowerSourceError, match="HTTP 404"):
        RedfishSource(redfish.Service(f"{url}/redfish/v1/Chassis/9")).start()
    (spec,) = parse(f"redfish:{url}/redfish/v1/Chassis/1,interval=0.25")
    assert check([build(spec)]) == [(spec.text, "")]


def _until_read(rec: Recorder, watts: float) -> None:
    """Wait (at most 10 s) until the recorder holds a good reading of `watts`: a loaded host
    makes the first reads late (the sampler's thread, a simulator's answer, ipmitool's
    start), so a fixed sleep before acting on the source is no sure thing."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if any(s.value == watts for s in rec.samples()):
            return
        time.sleep(0.05)
    raise AssertionError(f"no reading of {watts} W in 10 s: {rec.samples()[-3:]}")


def test_redfish_read_at_each_round_then_killed_mid_run(tmp_path):
    """Readings follow the service (a changed reading shows); the service killed mid-run:
    said once, the run goes on, the rest of the window a gap."""
    with bmc_simulators.redfish_static(tmp_path) as (proc, url, mockup):
        said = []
        rec = Recorder(RedfishSource(redfish.Service(f"{url}/redfish/v1/Chassis/1"),
                                     interval_s=0.1), say=said.append)
        t0 = time.monotonic()
        rec.start()
        _until_read(rec, 344.0)
        power_file = mockup / "Chassis" / "1" / "Power" / "index.json"
        doc = json.loads(power_file.read_text())
        doc["PowerControl"][0]["PowerConsumedWatts"] = 400
        power_file.write_text(json.dumps(doc))
        _until_read(rec, 400.0)
        proc.kill()
        proc.wait()
        killed = time.monotonic()          # no reading after this can be good
        time.sleep(0.6)
        rec.read_now()
        t1 = time.monotonic()
        rec.stop()
    values = [s.value for s in rec.samples() if s.value is not None]
    assert values[0] == 344.0 and values[-1] == 400.0 and set(values) == {344.0, 400.0}
    assert len(said) == 1 and "Connection refused" in said[0] and "run goes on" in said[0]
    # The window as the readings taken make it (on a loaded host they come late and
    # further apart): covered between consecutive good readings, from the last one before
    # the kill to the end a gap at least as long as the service was dead.
    good = [s.mono for s in rec.samples() if s.value is not None]
    assert good[-1] <= killed < t1
    win = rec.window(t0, t1)
    assert win.gaps[-1] == (pytest.approx(good[-1]), pytest.approx(t1))
    assert win.gaps[-1][1] - win.gaps[-1][0] >= t1 - killed
    max_gap = rec.source.info.max_gap_s
    assert win.coverage == pytest.approx(
        readings.covered_s(rec.samples(), t0, t1, max_gap) / (t1 - t0))
    assert 0 < win.coverage <= (killed - t0) / (t1 - t0)
    assert 344.0 < win.mean_w < 400.0


def test_ipmi_sim_killed_mid_run_leaves_a_gap(tmp_path):
    with bmc_simulators.ipmi_sim(tmp_path) as (proc, port, pw):
        said = []
        rec = Recorder(IpmiSource(ipmitool.Bmc("127.0.0.1", port, "admin", str(pw), 3),
                                  sensor=SENSOR, interval_s=0.2), say=said.append)
        t0 = time.monotonic()
        rec.start()
        _until_read(rec, 220.0)
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 10
        while not rec.failures and time.monotonic() < deadline:   # ipmitool gives up in ~2 s
            time.sleep(0.1)
        t1 = time.monotonic()
        rec.stop()
    good = [s for s in rec.samples() if s.value is not None]
    assert good and {s.value for s in good} == {220.0}
    assert len(said) == 1 and "failed" in said[0]
    win = rec.window(t0, t1)
    assert win.gaps and win.gaps[-1][1] == pytest.approx(t1) and win.coverage < 1
