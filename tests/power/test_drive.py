"""The drive's own power report as a source (pts.power.drive, issue 51 §1): C0h's Current
Average Power decoded from bytes, the standard Power Measurement (log 02h's Interval Power
Measurement) where Identify says the drive supports it, the power state in use with its
Maximum Power as an upper bound.

No drive here reports power, so the drives are answers to nvme-cli's read-only commands:
- CONSTRUCTED: C0h pages of log page version 6 (OCP 2.7) built with the project's encoder
  (pts.tools.ocp_log_decode.encode) holding known power and counters; an Identify
  Controller made from QEMU 10's recorded one (tests/data/qemu-10/fdp/nvme-id-ctrl.bin) with
  the bytes named in `identify` changed; a log 02h holding a known Interval Power
  Measurement. Labelled constructed wherever they are used.
- RECORDED: QEMU 10's controller (tests/data/qemu-10, its README): C0h log page version 5,
  whose power fields are 0, and CTRATT bit 21 (PMS) cleared: it reports no power.
"""

from __future__ import annotations

import pytest

from pts.config import ocp_log_c0
from pts.config.power_option import SourceSpec
from pts.power import drive
from pts.power.energy import POWER
from pts.power.source import DRIVE, PowerSourceError, Recorder
from pts.tools.commands import CommandResult
from pts.tools.ocp_log_decode import encode
from tests.support.helpers import DATA
from tests.support.qemu10_drive import FDP

QEMU_C0H = DATA / "qemu-10" / "nvme-get-log-c0h_raw_0.bin"
FEATURE_02H = (FDP / "feature-02h_current.txt").read_text()      # state 0 in use
REFUSED = "NVMe status: Invalid Field in Command: ...(0x4002)"


def c0h_v6(watts: int, count: int = 0, kwh: int = 3) -> bytes:
    """CONSTRUCTED: a C0h page of log page version 6 (OCP 2.7)."""
    return encode(ocp_log_c0.PAGE, {"current_average_power": watts, "lifetime_power_consumed":
                                    kwh, "power_state_change_count": count}, 6)


def identify(pms: bool = True, ipmsr: int = 0x0402, mp: int = 2500) -> bytes:
    """CONSTRUCTED from QEMU 10's recorded Identify Controller: CTRATT bit 21 (PMS) as `pms`,
    IPMSR (bytes 393:392; 0402h: 2 x 1 ms), power state 0's Maximum Power (bytes 2049:2048,
    0.01 W units: 2500 = 25 W)."""
    data = bytearray((FDP / "nvme-id-ctrl.bin").read_bytes())
    ctratt = int.from_bytes(data[96:100], "little") & ~(1 << 21) | (pms << 21)
    data[96:100] = ctratt.to_bytes(4, "little")
    data[392:394] = ipmsr.to_bytes(2, "little")
    data[2048:2050] = mp.to_bytes(2, "little")
    return bytes(data)


def smart_log(value: int, scale: int) -> bytes:
    """CONSTRUCTED: a log 02h whose Interval Power Measurement is value (15:0), scale (17:16)."""
    data = bytearray(512)
    data[240:244] = (value | scale << 16).to_bytes(4, "little")
    return bytes(data)


class Nvme:
    """commands.run for nvme-cli's reads: C0h answers each read with the next of `c0h` (the
    last repeats; None: refused), log 02h with `log02`, Identify with `ident`."""

    def __init__(self, c0h, ident, log02=None):
        self.c0h, self.ident, self.log02, self.calls = list(c0h), ident, log02, []

    def __call__(self, argv, *, stdout_path=None, **kwargs):
        argv = list(argv)
        self.calls.append(argv)
        assert argv[0] == "nvme" and argv[1] in ("id-ctrl", "get-feature", "get-log"), argv
        if argv[1] == "get-feature":
            return CommandResult(tuple(argv), 0, FEATURE_02H, "", 0.0)
        if argv[1] == "id-ctrl":
            data = self.ident
        elif "--log-id=0xc0" in argv:
            data = self.c0h.pop(0) if len(self.c0h) > 1 else self.c0h[0]
        else:
            assert "--log-id=0x02" in argv, argv
            data = self.log02
        if data is None:
            return CommandResult(tuple(argv), 1, "", REFUSED, 0.0)
        stdout_path.write_bytes(data)
        return CommandResult(tuple(argv), 0, "", "", 0.0)

    def reads(self, what: str) -> int:
        return sum(1 for a in self.calls if what in a)


def test_constructed_c0h_version_6_reports_its_power_and_the_state_bound(tmp_path):
    nvme = Nvme([c0h_v6(9)], identify(pms=False, ipmsr=0x0402))
    report = drive.probe("/dev/nvme0", tmp_path, run=nvme)
    assert report.reading == drive.C0H and report.watts == 9.0
    assert report.sample_s == pytest.approx(0.002)            # IPMSR 0402h: 2 x 1 ms
    assert report.state == 0 and report.state_max_w == 25.0
    assert "C0h log page version 6: 9 W now, 3 kWh lifetime" in report.why
    assert "an upper bound the drive states, not a reading" in report.why
    assert nvme.reads("--log-id=0x02") == 0                   # C0h reports: 02h not read


def test_the_sources_samples_and_energy_are_the_constructed_pages(tmp_path):
    """Every sample is a page's Current Average Power; a window's energy is that power times
    the covered seconds, its largest reading and the Power State Change Counts the pages'."""
    pages = [c0h_v6(12, count=3)] * 3 + [c0h_v6(15, count=4)] + [c0h_v6(12, count=5)] * 3
    nvme = Nvme([c0h_v6(12, count=3)] + pages, identify(pms=False))
    source = drive.reader("/dev/nvme0n1", run=nvme)(SourceSpec("drive", "", {"interval": "9"}))
    assert source.info.measures == DRIVE and source.info.kind == POWER
    assert source.info.interval_s == 9.0 and source.info.window_s == 1.0
    assert "upper bound, not a reading" in source.info.detail
    rec = Recorder(source, say=lambda text: None)
    rec.start()                       # its thread reads every 9 s: only read_now reads here
    try:
        for _ in pages:
            rec.read_now()
    finally:
        rec.stop()
    got = rec.samples()
    assert [s.value for s in got] == [12.0] * 3 + [15.0] + [12.0] * 3
    assert [s.state_count for s in got] == [3, 3, 3, 4, 5, 5, 5]
    flat = rec.window(got[0].mono, got[2].mono)        # three readings of 12 W
    assert flat.energy_j == pytest.approx(12.0 * (got[2].mono - got[0].mono), rel=1e-12)
    assert flat.mean_w == pytest.approx(12.0) and flat.max_w == 12.0
    assert flat.state_counts == (3, 3)
    whole = rec.window(got[0].mono, got[-1].mono)
    assert whole.max_w == 15.0 and whole.state_counts == (3, 5) and whole.samples == 7
    assert 12.0 < whole.mean_w < 15.0


def test_qemu_10s_recorded_controller_reports_no_power_and_gets_no_source(tmp_path):
    """RECORDED: C0h version 5 with 0 W, PMS cleared: no source, so nothing is read per
    sample; the probe reads C0h, Identify and the power state once each, never log 02h."""
    nvme = Nvme([QEMU_C0H.read_bytes()], (FDP / "nvme-id-ctrl.bin").read_bytes())
    report = drive.probe("/dev/nvme0", tmp_path, run=nvme)
    assert report.reading is None
    assert report.why.startswith("the drive reports no power: C0h log page version 5 gives 0 "
                                 "in Current Average Power (SMART-47)")
    assert "no Power Measurement (Identify Controller CTRATT bit 21, PMS, cleared)" in report.why
    assert len(nvme.calls) == 3 and nvme.reads("--log-id=0x02") == 0
    with pytest.raises(PowerSourceError, match="the drive reports no power"):
        drive.reader("/dev/nvme0n1", run=nvme)(SourceSpec("drive"))
    assert nvme.reads("--log-id=0xc0") == 2          # the probe's read only, no sample's


def test_power_measurement_where_c0h_has_no_power_fields(tmp_path):
    """CONSTRUCTED: C0h of version 3 (OCP 2.0: no power fields), PMS set: log 02h's Interval
    Power Measurement, 1234 x 0.01 W; its sampling 2 ms (IPMSR)."""
    v3 = encode(ocp_log_c0.PAGE, {}, 3)
    nvme = Nvme([v3], identify(pms=True), smart_log(1234, 2))
    report = drive.probe("/dev/nvme0", tmp_path, run=nvme)
    assert report.reading == drive.IPM and report.watts == pytest.approx(12.34)
    assert "C0h log page version 3 (2.0) has no power fields" in report.why
    source = drive.DriveSource("/dev/nvme0", report, run=nvme)
    source.start()
    try:
        (sample,) = source.read()
    finally:
        source.stop()
    assert sample.value == pytest.approx(12.34) and sample.state_count is None
    assert drive.ipm_power(smart_log(1234, 1)) == pytest.approx(0.1234)
    assert drive.ipm_power(smart_log(1234, 0)) is None          # scale 00b: not reported
    assert drive.ipm_power(smart_log(0, 2)) is None             # 0h: not reported


def test_no_reading_and_refusals_are_said(tmp_path):
    zero = Nvme([c0h_v6(0)], identify(pms=True), smart_log(0, 2))
    report = drive.probe("/dev/nvme0", tmp_path, run=zero)
    assert report.reading is None and "gives 0 in Current Average Power" in report.why
    assert "Interval Power Measurement 0: no reading" in report.why
    refused = Nvme([None], identify(pms=False))
    report = drive.probe("/dev/nvme0", tmp_path, run=refused)
    assert report.reading is None and "no OCP C0h (log C0h: /dev/nvme0 does not support" \
        in report.why
    assert drive.sample_period_s(0) is None and drive.sample_period_s(0x0605) is None
    assert drive.sample_period_s(0x0132) == pytest.approx(50e-6)


def test_a_failed_read_is_a_gap_and_not_a_drive_is_refused(tmp_path):
    nvme = Nvme([c0h_v6(10), c0h_v6(10), None, c0h_v6(0)], identify(pms=False))
    source = drive.reader("/dev/nvme0n1", run=nvme)(SourceSpec("drive"))
    said = []
    rec = Recorder(source, say=said.append)
    rec.start()
    try:
        for _ in range(3):
            rec.read_now()
    finally:
        rec.stop()
    assert [s.value for s in rec.samples()] == [10.0, None, None]
    assert len(said) == 1 and "failed" in said[0]
    with pytest.raises(PowerSourceError, match="not an NVMe namespace block device"):
        drive.reader("/dev/loop3")(SourceSpec("drive"))


# --- the session's start (pts.session.power_check): --power drive and the default ----------

def settings(power=()):
    import dataclasses

    from pts.config.settings import make_settings
    from pts.config.spec import DEFAULT_SPEC, load_spec
    return dataclasses.replace(make_settings(load_spec(DEFAULT_SPEC)), power=power)


def nvme_device(transport="nvme", path="/dev/nvme0n1"):
    from types import SimpleNamespace
    return SimpleNamespace(path=path, given=path, emulated=False, remote=None,
                           transport=transport)


def test_without_power_the_drive_that_reports_is_read_and_said():
    """CONSTRUCTED C0h version 6 at 11 W: the default becomes --power drive, said; the
    start-up check reads it once more (its first sample)."""
    from pts.session import power_check
    nvme, said = Nvme([c0h_v6(11)], identify(pms=False)), []
    got = power_check.check(settings(), nvme_device(), said.append, given=False, run=nvme)
    assert got.power == (SourceSpec("drive"),)
    assert len(said) == 1 and said[0].startswith(
        "[pts power] no --power given: the drive reports its power: C0h Current Average "
        "Power (SMART-47): C0h log page version 6: 11 W now") and "reading it" in said[0]
    assert nvme.reads("--log-id=0xc0") == 3     # the default's probe, the source's, a sample


def test_without_power_qemu_10_reports_none_said_and_nothing_more_is_read():
    """RECORDED QEMU 10: no source; three reads at the start, none after."""
    from pts.session import power_check
    nvme = Nvme([QEMU_C0H.read_bytes()], (FDP / "nvme-id-ctrl.bin").read_bytes())
    said = []
    got = power_check.check(settings(), nvme_device(), said.append, given=False, run=nvme)
    assert got.power == () and len(nvme.calls) == 3
    assert said == [
        "[pts power] no --power given: the drive reports no power: C0h log page version 5 "
        "gives 0 in Current Average Power (SMART-47) and 0 kWh in Lifetime Power Consumed "
        "(SMART-48): no reading; no Power Measurement (Identify Controller CTRATT bit 21, "
        "PMS, cleared); power state 0 in use, its Maximum Power 25.0 W (an upper bound the "
        "drive states, not a reading); no power source (give --power to read one)"]
    with pytest.raises(power_check.PowerRefused, match="the drive reports no power: C0h"):
        power_check.check(settings((SourceSpec("drive"),)), nvme_device(), run=nvme)


def test_the_default_asks_nothing_of_a_loop_device_and_drive_is_refused_there():
    from pts.session import power_check
    said = []
    loop = nvme_device(transport="loop", path="/dev/loop7")
    assert power_check.check(settings(), loop, said.append, given=False).power == ()
    assert said == []
    with pytest.raises(power_check.PowerRefused, match="/dev/loop7 is not an NVMe drive"):
        power_check.check(settings((SourceSpec("drive"),)), loop)
    nvme = Nvme([c0h_v6(11)], identify(pms=False))     # --power none: given, nothing read
    assert power_check.check(settings(), nvme_device(), said.append, run=nvme).power == ()
    assert nvme.calls == [] and said == []
