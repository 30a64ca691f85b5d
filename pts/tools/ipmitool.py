"""ipmitool (Debian's ipmitool): a BMC's power reading over IPMI-over-LAN (lanplus).

Two readings, both plain watts:
- `dcmi power reading` (DCMI 1.5 Get Power Reading, netfn 2Ch cmd 02h): the line
  "Instantaneous power reading: <N> Watts" of ipmitool 1.8's dcmi.c;
- `sensor reading NAME`: a threshold sensor whose unit is Watts ("NAME | <value>"), for a
  BMC without DCMI (completion code C1h, "Invalid command"; OpenIPMI's ipmi_sim is one).
The password is passed as a file (-f), never on the command line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pts.tools import commands

TOOL = "ipmitool"
PACKAGE = "ipmitool"
TIMEOUT_S = 15
# ipmitool's own wait for a silent BMC is 2 s x 4 tries a step (20 s a reading): a reading
# that late is of no use to a 1 s source and holds its recorder: a 1 s wait and one retry
# fail in ~2 s (measured against a stopped ipmi_sim), and the next reading tries again.
WAIT_ARGS = ["-N", "1", "-R", "1"]
_DCMI = re.compile(r"Instantaneous power reading:\s*([0-9.]+)\s*Watts")
_DEACTIVATED = re.compile(r"Power reading state is:\s*deactivated")
_NO_DCMI = re.compile(r"Invalid command \(c1\)|rsp=0xc1", re.I)


class NoDcmi(commands.ToolError):
    """The BMC answered DCMI's Get Power Reading with C1h (no DCMI)."""


@dataclass(frozen=True)
class Bmc:
    host: str
    port: int = 623
    user: str = ""
    password_file: str = ""
    # The RMCP+ cipher suite (ipmitool -C); None: ipmitool's own (it asks the BMC for its
    # suites first, which a BMC that does not answer Get Channel Cipher Suites, as
    # OpenIPMI's ipmi_sim, makes a 10 s wait at each reading).
    cipher: int | None = None

    def argv(self, *command: str) -> list[str]:
        args = [TOOL, "-I", "lanplus", "-H", self.host, "-p", str(self.port), *WAIT_ARGS]
        if self.cipher is not None:
            args += ["-C", str(self.cipher)]
        if self.user:
            args += ["-U", self.user]
        if self.password_file:
            args += ["-f", self.password_file]
        return args + list(command)


def parse_dcmi_power(text: str) -> float:
    """The instantaneous reading; ValueError when there is none, or when the BMC says its
    power measurement is off ("Power reading state is: deactivated", bit 6 of the state
    byte clear: the numbers are then no measurement)."""
    match = _DCMI.search(text)
    if match is None:
        raise ValueError(f"no 'Instantaneous power reading' in ipmitool's output: {text[:200]!r}")
    if _DEACTIVATED.search(text):
        raise ValueError("the BMC's power measurement is deactivated (ipmitool dcmi power "
                         "reading: 'Power reading state is: deactivated'): its readings are "
                         "no measurement; enable it in the BMC, or name a Watts sensor "
                         "(sensor=NAME)")
    return float(match.group(1))


def parse_sensor_reading(text: str, name: str) -> float:
    """The value of `ipmitool sensor reading NAME` ("NAME | 220"); 'na' is no reading."""
    for line in text.splitlines():
        label, sep, value = line.partition("|")
        if sep and label.strip() == name:
            try:
                return float(value.strip())
            except ValueError:
                raise ValueError(f"sensor {name!r} has no reading ({value.strip()!r})") from None
    raise ValueError(f"sensor {name!r} not in ipmitool's output: {text[:200]!r}")


def dcmi_power_reading(bmc: Bmc) -> float:
    """Watts now by DCMI; NoDcmi when the BMC does not implement it."""
    result = commands.run(bmc.argv("dcmi", "power", "reading"), timeout=TIMEOUT_S, check=False)
    text = result.stdout + result.stderr
    if _NO_DCMI.search(text):
        raise NoDcmi(f"the BMC at {bmc.host}:{bmc.port} has no DCMI power reading (it answered "
                     f"'Invalid command', C1h): name its power sensor with sensor=NAME "
                     f"(`ipmitool sdr type 0x0b` lists them)")
    if result.returncode != 0:
        raise commands.ToolFailed(f"ipmitool dcmi power reading failed on {bmc.host}:{bmc.port}:"
                                  f" {result.excerpt()}", result)
    return parse_dcmi_power(result.stdout)


def sensor_watts(bmc: Bmc, name: str) -> float:
    result = commands.run(bmc.argv("sensor", "reading", name), timeout=TIMEOUT_S, check=False)
    if result.returncode != 0:
        raise commands.ToolFailed(f"ipmitool sensor reading {name!r} failed on {bmc.host}:"
                                  f"{bmc.port}: {result.excerpt()}", result)
    return parse_sensor_reading(result.stdout, name)
