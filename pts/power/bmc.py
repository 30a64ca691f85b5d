"""The server's BMC as a power source (issue 51 §1): IPMI (DCMI power reading, or a Watts
sensor where the BMC has no DCMI) through pts.tools.ipmitool, and Redfish through
pts.tools.redfish. Both measure the whole server: its input power, as the BMC reports it."""

from __future__ import annotations

from pathlib import Path

from pts.power.energy import Sample
from pts.power.source import SERVER, PowerSourceError, SourceInfo, now_sample
from pts.tools import commands, ipmitool, redfish

# A BMC refreshes its reading about once a second (DCMI's default averaging period is 1 s);
# reading faster only repeats values and loads the BMC.
BMC_INTERVAL_S = 1.0


class IpmiSource:
    def __init__(self, bmc: ipmitool.Bmc, sensor: str = "", interval_s: float = BMC_INTERVAL_S,
                 name: str = "") -> None:
        self.bmc, self.sensor = bmc, sensor
        how = f"sensor {sensor!r} (Watts)" if sensor else "DCMI power reading"
        self.info = SourceInfo(name or f"ipmi:{bmc.host}:{bmc.port}", SERVER, interval_s,
                               detail=f"ipmitool lanplus {bmc.host}:{bmc.port}, {how}")

    def start(self) -> None:
        if self.bmc.password_file and not Path(self.bmc.password_file).is_file():
            raise PowerSourceError(f"{self.info.name}: password-file {self.bmc.password_file} "
                                   f"does not exist: give the file that holds the BMC password")
        self.read()

    def read(self) -> list[Sample]:
        try:
            if self.sensor:
                watts = ipmitool.sensor_watts(self.bmc, self.sensor)
            else:
                watts = ipmitool.dcmi_power_reading(self.bmc)
        except (commands.ToolError, ValueError) as exc:
            raise PowerSourceError(f"{self.info.name}: {exc}") from None
        return [now_sample(watts)]

    def stop(self) -> None:
        pass


class RedfishSource:
    def __init__(self, service: redfish.Service, interval_s: float = BMC_INTERVAL_S,
                 name: str = "") -> None:
        self.service = service
        self.info = SourceInfo(name or f"redfish:{service.chassis_url}", SERVER, interval_s,
                               detail=f"Redfish {service.chassis_url} (EnvironmentMetrics "
                                      f"PowerWatts, else Power PowerConsumedWatts)")

    def start(self) -> None:
        self.read()

    def read(self) -> list[Sample]:
        try:
            watts, _ = redfish.read_watts(self.service)
        except redfish.RedfishError as exc:
            raise PowerSourceError(f"{self.info.name}: {exc}") from None
        return [now_sample(watts)]

    def stop(self) -> None:
        pass
