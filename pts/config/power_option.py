"""`--power SOURCE[,SOURCE...]` (issue 51 §5) read into source specs: pure, so that the
option's row (pts.config.option_table) checks it where every option is checked; building
the sources and asking them is pts.power.spec's.

A source is a name, an optional argument after a colon, and its parameters as key=value
items after it, all separated by commas:

    drive                       the drive's own report (OCP C0h, Power Measurement)
    emulated                    the emulated SSD's power model (--device emulated:...)
    ipmi:HOST[:PORT]            the BMC, IPMI DCMI power reading (user=, password-file=,
                                sensor=NAME: a Watts sensor instead of DCMI, cipher=N:
                                the RMCP+ cipher suite, e.g. 3 or 17)
    redfish:URL                 the BMC's Redfish chassis URL (user=, password-file=,
                                insecure=yes: no TLS check)
    rapl[:ZONE]                 the host's RAPL package zone (default 0)
    meter:COMMAND               a lab meter's command (measures=WHAT); the command is the
                                rest of its item, so it holds no comma (wrap it in a script)
    every source: interval=SECONDS (how often it is read)

    none                        no power source (given alone)

Without --power: the drive's own report where the drive has one, else none. e.g.
`--power emulated,ipmi:10.0.0.5,user=admin,password-file=/root/bmc.pw,rapl`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PARAMS = {"none": set(), "drive": {"interval"}, "emulated": {"interval"}, "rapl": {"interval"},
          "ipmi": {"interval", "user", "password-file", "sensor", "cipher"},
          "redfish": {"interval", "user", "password-file", "insecure"},
          "meter": {"interval", "measures"}}
NEEDS_ARG = {"ipmi": "ipmi:HOST[:PORT]", "redfish": "redfish:URL", "meter": "meter:COMMAND"}
_PARAM = re.compile(r"^([a-z][a-z-]*)=(.*)$", re.S)


class PowerSpecError(ValueError):
    """A --power value that cannot be used: the message names the bad part and the fix."""


@dataclass(frozen=True)
class SourceSpec:
    kind: str
    arg: str = ""
    params: dict = field(default_factory=dict)

    @property
    def text(self) -> str:
        head = f"{self.kind}:{self.arg}" if self.arg else self.kind
        return ",".join([head] + [f"{k}={v}" for k, v in self.params.items()])

    @property
    def interval_s(self) -> float | None:
        raw = self.params.get("interval")
        if raw is None:
            return None
        try:
            value = float(raw)
        except ValueError:
            value = 0.0
        if not value > 0:
            raise PowerSpecError(f"--power {self.kind}: interval={raw} is not a positive number "
                                 f"of seconds: give e.g. interval=1")
        return value


def parse(text: str) -> list[SourceSpec]:
    """The sources of a --power value, in order; PowerSpecError on the first bad part."""
    specs: list[SourceSpec] = []
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            raise PowerSpecError(f"--power {text!r}: an empty item (two commas, or one at an "
                                 f"end): remove it")
        if match := _PARAM.match(item):
            key, value = match.groups()
            if not specs:
                raise PowerSpecError(f"--power {text!r}: parameter {item!r} comes before any "
                                     f"source: put it after its source, e.g. ipmi:HOST,{item}")
            spec = specs[-1]
            if key not in PARAMS[spec.kind]:
                known = ", ".join(sorted(PARAMS[spec.kind]))
                raise PowerSpecError(f"--power: {spec.kind} takes no parameter {key!r} "
                                     f"(it takes: {known})")
            spec.params[key] = value
            spec.interval_s  # noqa: B018  (checks interval= where it is given)
            continue
        kind, _, arg = item.partition(":")
        if kind not in PARAMS:
            known = ", ".join(sorted(PARAMS))
            raise PowerSpecError(f"--power: unknown source {kind!r} in {item!r}: choose from "
                                 f"{known}")
        if kind in NEEDS_ARG and not arg:
            raise PowerSpecError(f"--power: {kind} needs its argument: {NEEDS_ARG[kind]}")
        if kind in ("none", "drive", "emulated") and arg:
            raise PowerSpecError(f"--power: {kind} takes no argument ({item!r}): write {kind}")
        if kind == "rapl" and arg and not arg.isdigit():
            raise PowerSpecError(f"--power: rapl:{arg}: the zone is a number (rapl:0 is "
                                 f"/sys/class/powercap/intel-rapl:0)")
        if kind == "redfish" and not arg.startswith(("http://", "https://")):
            raise PowerSpecError(f"--power: redfish:{arg} is not an http:// or https:// URL: "
                                 f"give the chassis URL, e.g. redfish:https://BMC/redfish/v1/"
                                 f"Chassis/1")
        specs.append(SourceSpec(kind, arg, {}))
    if any(s.kind == "none" for s in specs):
        if len(specs) > 1:
            raise PowerSpecError(f"--power {text!r}: 'none' means no power source: give it "
                                 f"alone, or leave it out")
        return []
    names = [s.text for s in specs]
    if len(set(names)) != len(names):
        raise PowerSpecError(f"--power {text!r} names a source twice: name each once")
    return specs


