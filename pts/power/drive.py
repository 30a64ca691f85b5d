"""The drive's own power report as a source (issue 51 §1): what an NVMe drive says it draws.

Read as bytes (nvme-cli's generic `get-log --raw-binary`, `id-ctrl -b`, `get-feature`),
decoded by the spec's tables, never by what nvme-cli's plugins print:
- OCP C0h (SMART / Health Information Extended, pts.config.ocp_log_c0): Current Average Power
  (SMART-47, bytes 263:262, W) "measured over a 1 second window with a recommended sampling
  rate of 2 ms or smaller" [OCP 2.7 L1666-1669], Lifetime Power Consumed (SMART-48, kWh) and
  the Power State Change Count (SMART-31) beside it; log page version 5 (2.6) and 6 (2.7)
  carry them, version 3 (2.0) does not;
- the standard Power Measurement (NVMe 2.1, TP4199), where Identify Controller says the
  drive supports it (CTRATT bit 21, PMS): the SMART / Health log's (02h) Interval Power
  Measurement (bytes 243:240: the average over the most recent 1 s; value bits 15:0, scale
  bits 17:16) and Operational Lifetime Energy Consumed (bytes 239:232, Wh); the sampling
  period its average is made of is Identify's IPMSR (bytes 393:392). The Power Measurement
  log (25h) is not read: its averages run over a measurement the host starts with Set
  Features 25h, and the run sets no feature on the drive;
- the power state in use (Get Features 02h, bits 4:0) and its descriptor's Maximum Power:
  an upper bound the drive states, never a reading.

A reading of 0 W is no reading (no powered drive draws 0 W; the NVMe field says so of its
0h: "not reported"). Which of the two the drive reports is found once (`probe`); a drive
reporting neither gets no source, so nothing is read per sample (QEMU 10's controller: C0h
version 5 with 0 in its power fields, PMS cleared).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pts.config import ocp_log_c0
from pts.config.power_option import SourceSpec
from pts.power.energy import POWER, Sample
from pts.power.source import DRIVE, PowerSourceError, SourceInfo, now_sample
from pts.tools import commands
from pts.tools.nvme import controller_path
from pts.tools.nvme_facts import FactsError, feature_value, id_ctrl, power_watts
from pts.tools.nvme_json import NvmeError
from pts.tools.ocp_log_decode import OcpLogError, decode
from pts.tools.ocp_log_read import OcpLogNotSupported, read_bytes

# C0h's Current Average Power is the average of the last 1 s [OCP 2.7 L1666]: read once a
# second, each reading covers the second before it (faster reads see overlapping windows).
DRIVE_INTERVAL_S = 1.0
C0H_WINDOW_S = 1.0
C0H_SIZE = 512
SMART_LOG, SMART_SIZE = 0x02, 512
OLEC_AT, IPM_AT = 232, 240          # log 02h: bytes 239:232 (Wh), 243:240 (NVMe 2.1)
PMS_BIT = 21                        # Identify Controller CTRATT: Power Measurement Support
IPMSR_AT = 392                      # Identify Controller bytes 393:392 (NVMe 2.1)
SCALE_W = {1: 0.0001, 2: 0.01}      # IPMS / PWRS: 01b 0.0001 W, 10b 0.01 W (00b: none)
# IPMSR's Sample Rate Scale (bits 15:8) -> seconds per unit of its value (bits 7:0)
SRS_S = {1: 1e-6, 2: 1e-5, 3: 1e-4, 4: 1e-3, 5: 1e-2}
C0H, IPM = "C0h Current Average Power (SMART-47)", "log 02h Interval Power Measurement"


@dataclass(frozen=True)
class DriveReport:
    """What the drive reports of its power, found by one read of each structure."""

    reading: str | None             # C0H, IPM, or None: the drive reports no power
    why: str                        # said at session start / --dry-run
    watts: float | None = None      # the first reading
    sample_s: float | None = None   # the sampling period of its 1 s average, as stated
    state: int | None = None        # the power state in use (Get Features 02h)
    state_max_w: float | None = None   # that state's Maximum Power: an upper bound


def _run(run: Callable | None) -> Callable:
    if run is None:
        commands.require("nvme", "nvme-cli")
        return commands.run
    return run


def c0h_power(data: bytes) -> tuple[float | None, int | None, str]:
    """(W, the Power State Change Count, what the page says) of C0h's bytes; W None where
    the page's version carries no power field or gives 0."""
    page = decode(ocp_log_c0.PAGE, data)
    watts = page.fields["current_average_power"]
    count = page.fields["power_state_change_count"]
    if watts is None:
        return None, count, (f"C0h log page version {page.version} ({page.spec}) has no power "
                             f"fields (Current Average Power, SMART-47: version 5 on)")
    if watts == 0:
        return None, count, (f"C0h log page version {page.version} gives 0 in Current Average "
                             f"Power (SMART-47) and {page.fields['lifetime_power_consumed']} "
                             f"kWh in Lifetime Power Consumed (SMART-48): no reading")
    return float(watts), count, (f"C0h log page version {page.version}: {watts} W now, "
                                 f"{page.fields['lifetime_power_consumed']} kWh lifetime")


def ipm_power(data: bytes) -> float | None:
    """Log 02h's Interval Power Measurement in W (None: not reported)."""
    if len(data) < IPM_AT + 4:
        raise NvmeError(f"log 02h: {len(data)} bytes, too short for bytes 243:240")
    ipm = int.from_bytes(data[IPM_AT:IPM_AT + 4], "little")
    value, scale = ipm & 0xFFFF, ipm >> 16 & 3
    return value * SCALE_W[scale] if value and scale in SCALE_W else None


def sample_period_s(ipmsr: int) -> float | None:
    """Identify's IPMSR as seconds (None: not reported, or a reserved scale)."""
    value, scale = ipmsr & 0xFF, ipmsr >> 8 & 0xFF
    return value * SRS_S[scale] if value and scale in SRS_S else None


def probe(ctrl: str, folder: Path, *, run: Callable | None = None,
          log_file: Path | None = None) -> DriveReport:
    """What drive `ctrl` (/dev/nvmeX) reports of its power: C0h first, then the standard
    Power Measurement; the bytes kept in `folder`. Read-only."""
    run = _run(run)
    folder.mkdir(parents=True, exist_ok=True)
    said, watts, reading = [], None, None
    try:
        watts, _, text = c0h_power(read_bytes(ctrl, 0xC0, C0H_SIZE, folder / "power-c0h.bin",
                                              run=run, log_file=log_file))
        said.append(text)
        reading = C0H if watts is not None else None
    except (OcpLogNotSupported, OcpLogError, NvmeError) as exc:
        said.append(f"no OCP C0h ({exc})")
    ctrl_bytes = folder / "power-id-ctrl.bin"
    got = run(["nvme", "id-ctrl", ctrl, "-b"], log_file=log_file, timeout=60,
              stdout_path=ctrl_bytes, check=False)
    try:
        ident = id_ctrl(ctrl_bytes.read_bytes()) if got.returncode == 0 else None
    except FactsError:
        ident = None
    raw = ctrl_bytes.read_bytes() if ident else b""
    sample_s = sample_period_s(int.from_bytes(raw[IPMSR_AT:IPMSR_AT + 2], "little")) \
        if ident else None
    if ident is None:
        said.append("Identify Controller not read: no Power Measurement support known")
    elif not ident["ctratt"] >> PMS_BIT & 1:
        said.append("no Power Measurement (Identify Controller CTRATT bit 21, PMS, cleared)")
    elif reading is None:
        try:
            watts = ipm_power(read_bytes(ctrl, SMART_LOG, SMART_SIZE,
                                         folder / "power-log-02h.bin", run=run,
                                         log_file=log_file))
        except NvmeError as exc:
            said.append(f"Power Measurement supported, log 02h not read ({exc})")
        else:
            reading = IPM if watts is not None else None
            said.append(f"Power Measurement: {watts} W now" if watts is not None else
                        "Power Measurement supported, Interval Power Measurement 0: no reading")
    state = state_max = None
    feature = run(["nvme", "get-feature", ctrl, "--feature-id=0x02", "--sel=0"],
                  log_file=log_file, timeout=60, check=False)
    if ident and feature.returncode == 0:
        state = feature_value(feature.stdout) & 0x1F
        if state < len(ident["psds"]):
            state_max = round(power_watts(ident["psds"][state]), 4)
            said.append(f"power state {state} in use, its Maximum Power {state_max} W (an "
                        f"upper bound the drive states, not a reading)")
    head = (f"the drive reports its power: {reading}" if reading else
            "the drive reports no power")
    # SMART-47's sampling "shall be the same as reported in the Interval Power Measurement
    # Sample Rate field" [OCP 2.7 L1667-1669]: IPMSR states it for both readings
    return DriveReport(reading, f"{head}: " + "; ".join(said), watts, sample_s, state,
                       state_max)


class DriveSource:
    """Polled once a second: each reading is the drive's average over the second before."""

    def __init__(self, ctrl: str, report: DriveReport, *, run: Callable | None = None,
                 interval_s: float = DRIVE_INTERVAL_S, name: str = "drive") -> None:
        if report.reading is None:
            raise PowerSourceError(f"{name}: {report.why}")
        self.ctrl, self.report, self._run = ctrl, report, run
        self._folder: tempfile.TemporaryDirectory | None = None
        bound = (f"; power state {report.state}'s Maximum Power {report.state_max_w} W is an "
                 f"upper bound, not a reading" if report.state_max_w is not None else "")
        rate = (f"sampled every {report.sample_s * 1000:g} ms (Identify IPMSR)"
                if report.sample_s else "its sampling rate not stated (IPMSR 0; C0h "
                "recommends 2 ms or faster)")
        self.info = SourceInfo(name, DRIVE, interval_s, kind=POWER,
                               detail=f"{ctrl}: {report.reading}, the drive's 1 s average, "
                                      f"{rate}{bound}",
                               window_s=C0H_WINDOW_S, sample_s=report.sample_s)

    def start(self) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="pts-drive-power-")
        self._run = _run(self._run)

    def read(self) -> list[Sample]:
        out = Path(self._folder.name)
        try:
            if self.report.reading == C0H:
                watts, count, text = c0h_power(read_bytes(
                    self.ctrl, 0xC0, C0H_SIZE, out / "c0h.bin", run=self._run, timeout=10))
            else:
                count, text = None, "Interval Power Measurement 0"
                watts = ipm_power(read_bytes(self.ctrl, SMART_LOG, SMART_SIZE,
                                             out / "log-02h.bin", run=self._run, timeout=10))
        except (NvmeError, OcpLogError) as exc:
            raise PowerSourceError(f"{self.info.name}: {exc}") from None
        if watts is None:
            raise PowerSourceError(f"{self.info.name}: {text}")
        sample = now_sample(watts)
        return [Sample(sample.mono, sample.wall, watts, state_count=count)]

    def stop(self) -> None:
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None


def reader(device_path: str, *, run: Callable | None = None,
           log_file: Path | None = None) -> Callable[[SourceSpec], DriveSource]:
    """The factory pts.power.spec.build takes for `--power drive`: the drive of namespace
    `device_path` (/dev/nvmeXnY) probed now (its bytes in a folder removed after) and its
    source built; PowerSourceError saying why when it reports no power."""
    def build(spec: SourceSpec) -> DriveSource:
        try:
            ctrl = controller_path(device_path)
        except NvmeError as exc:
            raise PowerSourceError(f"--power drive reads an NVMe drive's own report: {exc}") \
                from None
        with tempfile.TemporaryDirectory(prefix="pts-drive-power-") as folder:
            report = probe(ctrl, Path(folder), run=run, log_file=log_file)
        return DriveSource(ctrl, report, run=run, name=spec.text,
                           interval_s=spec.interval_s or DRIVE_INTERVAL_S)
    return build
