"""A Redfish service's power reading over HTTP(S) (urllib; DMTF DSP0268).

Two places a chassis reports its input power, both read as plain watts:
- PowerSubsystem (Redfish 2020.4 on): Chassis/{id}/PowerSubsystem/PowerSupplies/{id}/Metrics
  or, summed, the chassis' EnvironmentMetrics PowerWatts.Reading;
- Power (deprecated but what most BMCs still serve): Chassis/{id}/Power,
  PowerControl[0].PowerConsumedWatts.
`read_watts` takes a chassis URL and tries EnvironmentMetrics, then Power.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass

TIMEOUT_S = 10


class RedfishError(RuntimeError):
    """The service could not be reached, or its answer holds no power reading."""


@dataclass(frozen=True)
class Service:
    chassis_url: str            # e.g. http://bmc/redfish/v1/Chassis/1
    user: str = ""
    password: str = ""
    verify_tls: bool = True

    def get(self, url: str) -> dict:
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        if self.user:
            token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        context = None if self.verify_tls else ssl._create_unverified_context()  # noqa: SLF001
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S, context=context) as resp:
                return json.load(resp)
        except urllib.error.HTTPError as exc:
            raise RedfishError(f"GET {url}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise RedfishError(f"GET {url}: {getattr(exc, 'reason', exc)}") from None
        except ValueError as exc:
            raise RedfishError(f"GET {url}: not JSON ({exc})") from None

    def url(self, odata_id: str) -> str:
        """An @odata.id (a path) made absolute on the chassis URL's scheme and host."""
        scheme, _, rest = self.chassis_url.partition("://")
        return f"{scheme}://{rest.split('/', 1)[0]}{odata_id}"


def watts_in(resource: dict) -> float | None:
    """PowerWatts.Reading (EnvironmentMetrics) or PowerControl[0].PowerConsumedWatts (Power)."""
    reading = (resource.get("PowerWatts") or {}).get("Reading")
    if reading is None:
        controls = resource.get("PowerControl") or [{}]
        reading = controls[0].get("PowerConsumedWatts")
    return None if reading is None else float(reading)


def read_watts(service: Service) -> tuple[float, str]:
    """Watts now and the URL they came from."""
    chassis = service.get(service.chassis_url)
    tried = []
    for key in ("EnvironmentMetrics", "Power"):
        link = (chassis.get(key) or {}).get("@odata.id")
        if not link:
            continue
        url = service.url(link)
        tried.append(url)
        watts = watts_in(service.get(url))
        if watts is not None:
            return watts, url
    raise RedfishError(f"{service.chassis_url} reports no power: no PowerWatts.Reading in its "
                       f"EnvironmentMetrics nor PowerConsumedWatts in its Power"
                       f"{' (read ' + ', '.join(tried) + ')' if tried else ' (neither linked)'}")
