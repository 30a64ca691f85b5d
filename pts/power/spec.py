"""`--power SOURCE[,SOURCE...]` (issue 51 §5): parsing, building the sources, and the check
that each answers (at session start and in --dry-run).

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

e.g. `--power emulated,ipmi:10.0.0.5,user=admin,password-file=/root/bmc.pw,rapl`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pts.power.source import METER, PowerSource, PowerSourceError
from pts.tools import ipmitool, redfish

PARAMS = {"drive": {"interval"}, "emulated": {"interval"}, "rapl": {"interval"},
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
        if kind in ("drive", "emulated") and arg:
            raise PowerSpecError(f"--power: {kind} takes no argument ({item!r}): write {kind}")
        if kind == "rapl" and arg and not arg.isdigit():
            raise PowerSpecError(f"--power: rapl:{arg}: the zone is a number (rapl:0 is "
                                 f"/sys/class/powercap/intel-rapl:0)")
        if kind == "redfish" and not arg.startswith(("http://", "https://")):
            raise PowerSpecError(f"--power: redfish:{arg} is not an http:// or https:// URL: "
                                 f"give the chassis URL, e.g. redfish:https://BMC/redfish/v1/"
                                 f"Chassis/1")
        specs.append(SourceSpec(kind, arg, {}))
    names = [s.text for s in specs]
    if len(set(names)) != len(names):
        raise PowerSpecError(f"--power {text!r} names a source twice: name each once")
    return specs


def _host_port(arg: str) -> tuple[str, int]:
    host, _, port = arg.rpartition(":") if arg.count(":") == 1 else (arg, "", "")
    if port and not port.isdigit():
        raise PowerSpecError(f"--power: ipmi:{arg}: the port {port!r} is not a number "
                             f"(ipmi:HOST[:PORT], 623 by default)")
    return host, int(port) if port else 623


def _password(spec: SourceSpec) -> tuple[str, str]:
    """(file, its first line) of password-file=, checked now so the run does not start
    with a source that cannot log in."""
    path = spec.params.get("password-file", "")
    if not path:
        return "", ""
    try:
        return path, Path(path).read_text(encoding="utf-8").splitlines()[0]
    except (OSError, IndexError) as exc:
        raise PowerSpecError(f"--power {spec.kind}: password-file={path} cannot be read "
                             f"({exc}): give a file whose first line is the password") from None


def build(spec: SourceSpec, device: str = "",
          drive: Callable[[SourceSpec], PowerSource] | None = None) -> PowerSource:
    """The source of one spec. `device`: the device under test (for 'emulated'); `drive`:
    the factory of the drive's own source (pts.tools.nvme's C0h / Power Measurement reader,
    which the run-time hook passes)."""
    from pts.power.bmc import IpmiSource, RedfishSource
    from pts.power.emulated import EmulatedSource
    from pts.power.host import MeterSource, RaplSource

    every = {"interval_s": spec.interval_s} if spec.interval_s else {}
    if spec.kind == "drive":
        if drive is None:
            raise PowerSpecError("--power drive: this entry point reads no drive-reported "
                                 "power; use a run (it passes the drive's reader)")
        return drive(spec)
    if spec.kind == "emulated":
        if not device:
            raise PowerSpecError("--power emulated needs the emulated SSD: "
                                 "--device emulated:SIZE[:PROFILE]")
        return EmulatedSource(device, **every)
    if spec.kind == "rapl":
        return RaplSource(int(spec.arg or 0), **every)
    if spec.kind == "meter":
        return MeterSource(spec.arg, spec.params.get("measures", METER), name=spec.text,
                           **every)
    password_file, password = _password(spec)
    if spec.kind == "ipmi":
        host, port = _host_port(spec.arg)
        cipher = spec.params.get("cipher")
        if cipher is not None and not cipher.isdigit():
            raise PowerSpecError(f"--power ipmi: cipher={cipher} is not a cipher suite number "
                                 f"(ipmitool -C: e.g. cipher=3 or cipher=17)")
        bmc = ipmitool.Bmc(host, port, spec.params.get("user", ""), password_file,
                           None if cipher is None else int(cipher))
        return IpmiSource(bmc, spec.params.get("sensor", ""), name=spec.text, **every)
    service = redfish.Service(spec.arg, spec.params.get("user", ""), password,
                              verify_tls=spec.params.get("insecure", "no") != "yes")
    return RedfishSource(service, name=spec.text, **every)


def check(sources: list[PowerSource]) -> list[tuple[str, str]]:
    """Start each source and wait for its first reading (a meter may take up to two of its
    intervals to print one), then stop it: (name, '' when it answers, else why not)."""
    out = []
    for source in sources:
        try:
            source.start()
            wait_s = 2 * source.info.interval_s + 1.0
            deadline = time.monotonic() + wait_s
            while not source.read():
                if time.monotonic() > deadline:
                    raise PowerSourceError(f"{source.info.name}: no reading within "
                                           f"{wait_s:.0f} s")
                time.sleep(0.1)
            out.append((source.info.name, ""))
        except PowerSourceError as exc:
            out.append((source.info.name, str(exc)))
        finally:
            source.stop()
    return out
