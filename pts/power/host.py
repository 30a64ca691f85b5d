"""Sources on the host itself (issue 51 §1): RAPL energy counters and a lab meter's command.

RAPL: /sys/class/powercap/intel-rapl:N/energy_uj, the package's energy in µJ since an
arbitrary origin, wrapping at max_energy_range_uj (both read as the kernel's powercap
driver exposes them); the maths (pts.power.energy) takes the wrap.

A lab meter: any command that prints one sample a line on its standard output, so a
Quarch, Joulescope or bench meter's own CLI (or an ssh to a remote DUT host) plugs in:
- `<unix seconds> <watts>` (space, tab or comma between them), or
- CSV with a header naming a time column (time, timestamp, unix, t; Unix seconds) and a
  power column (watts, power, power_w, w); other columns are ignored.
Blank lines and lines starting with '#' are skipped. The timestamps are wall clock (the
meter's host must be NTP-synchronised with ours); they are put on our monotonic clock by the
offset between the two clocks taken when the meter starts.
"""

from __future__ import annotations

import queue
import shlex
import signal
import subprocess
import threading
import time
from pathlib import Path

from pts.power.energy import ENERGY, Sample
from pts.power.source import CPU_PACKAGE, METER, PowerSourceError, SourceInfo, now_sample
from pts.tools import commands

POWERCAP = Path("/sys/class/powercap")
RAPL_INTERVAL_S = 1.0
METER_INTERVAL_S = 1.0
TIME_COLUMNS = ("time", "timestamp", "unix", "t")
WATT_COLUMNS = ("watts", "power", "power_w", "w")


class RaplSource:
    def __init__(self, zone: int = 0, root: Path = POWERCAP,
                 interval_s: float = RAPL_INTERVAL_S, name: str = "") -> None:
        self.dir = Path(root) / f"intel-rapl:{zone}"
        self.name = name or f"rapl:{zone}"
        self.info = SourceInfo(self.name, CPU_PACKAGE, interval_s, kind=ENERGY,
                               detail=str(self.dir / "energy_uj"))

    def start(self) -> None:
        energy = self.dir / "energy_uj"
        if not energy.exists():
            raise PowerSourceError(f"{self.name}: {energy} does not exist: this host has no RAPL "
                                   f"zone there (no powercap driver, or not an Intel/AMD CPU "
                                   f"with RAPL); drop 'rapl' from --power")
        try:
            range_uj = int((self.dir / "max_energy_range_uj").read_text())
            label = (self.dir / "name").read_text().strip() if (self.dir / "name").exists() else ""
        except (OSError, ValueError) as exc:
            raise PowerSourceError(f"{self.name}: cannot read {self.dir}: {exc}") from None
        self.info = SourceInfo(self.name, f"{CPU_PACKAGE} ({label})" if label else CPU_PACKAGE,
                               self.info.interval_s, kind=ENERGY, range_j=range_uj / 1e6,
                               detail=str(energy))
        self.read()

    def read(self) -> list[Sample]:
        try:
            return [now_sample(int((self.dir / "energy_uj").read_text()) / 1e6)]
        except (OSError, ValueError) as exc:
            # energy_uj is root-only readable since Linux 5.10 (CVE-2020-8694)
            raise PowerSourceError(f"{self.name}: cannot read energy_uj: {exc}") from None

    def stop(self) -> None:
        pass


def parse_meter_line(line: str, columns: tuple[int, int] | None) -> tuple[float, float] | None:
    """(unix seconds, watts) of one line, None for a blank or comment line; ValueError
    naming the line when it is neither."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    fields = [f for f in text.replace(",", " ").replace("\t", " ").split(" ") if f]
    t, w = columns or (0, 1)
    try:
        return float(fields[t]), float(fields[w])
    except (IndexError, ValueError):
        raise ValueError(f"meter line {text!r} is not '<unix seconds> <watts>' "
                         f"(or the CSV columns its header named)") from None


def header_columns(line: str) -> tuple[int, int] | None:
    """The (time, watts) column numbers a CSV header names; None when it is no header."""
    names = [f.strip().lower() for f in line.strip().lstrip("#").split(",")]
    t = next((i for i, n in enumerate(names) if n in TIME_COLUMNS), None)
    w = next((i for i, n in enumerate(names) if n in WATT_COLUMNS), None)
    return None if t is None or w is None else (t, w)


class MeterSource:
    def __init__(self, command: str, measures: str = METER,
                 interval_s: float = METER_INTERVAL_S, name: str = "") -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise PowerSourceError("meter: no command: give meter:COMMAND, e.g. "
                                   "meter:'my-meter --csv'")
        self.info = SourceInfo(name or f"meter:{command}", measures, interval_s, detail=command)
        self._queue: queue.Queue = queue.Queue()
        self._proc: subprocess.Popen | None = None
        self._offset = 0.0
        self._problem: str | None = None     # a bad line read beside good ones: said next

    def start(self) -> None:
        self._offset = time.time() - time.monotonic()
        try:
            self._proc = subprocess.Popen(
                self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                stdin=subprocess.DEVNULL, start_new_session=True,
                # SIGKILL, not SIGTERM: a meter's CLI deaf to SIGTERM must not outlive a suite
                # killed -9 (stop() below still asks it politely first when the run ends)
                preexec_fn=commands.on_parent_death(signal.SIGKILL))
        except OSError as exc:
            raise PowerSourceError(f"{self.info.name}: cannot start {self.argv[0]}: {exc}") \
                from None
        threading.Thread(target=self._pump, daemon=True, name=self.info.name).start()

    def _pump(self) -> None:
        columns = None
        for n, line in enumerate(self._proc.stdout):
            if n == 0 and (found := header_columns(line)):
                columns = found
                continue
            try:
                parsed = parse_meter_line(line, columns)
            except ValueError as exc:
                self._queue.put(exc)
                continue
            if parsed:
                wall, watts = parsed
                self._queue.put(Sample(wall - self._offset, wall, watts))
        self._queue.put(None)            # the meter's output has ended

    def read(self) -> list[Sample]:
        if self._problem:
            problem, self._problem = self._problem, None
            raise PowerSourceError(f"{self.info.name}: {problem}")
        got, problem = [], None
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, ValueError):
                problem = str(item)
            elif item is None:
                self._queue.put(None)        # ended for good: every later read says so
                if not got:
                    code = self._proc.wait()
                    tail = self._proc.stderr.read().strip()[-300:]
                    raise PowerSourceError(f"{self.info.name}: the meter command ended (status "
                                           f"{code}){': ' + tail if tail else ''}")
                break
            else:
                got.append(item)
        if problem and not got:
            raise PowerSourceError(f"{self.info.name}: {problem}")
        # With good readings in the same read (reads slower than the meter's lines, or
        # late on a loaded host) they are kept and the bad line is the next read's failure,
        # not dropped unsaid.
        self._problem = problem
        return got

    def stop(self) -> None:
        if self._proc is not None:
            commands.stop(self._proc, grace=2.0)
