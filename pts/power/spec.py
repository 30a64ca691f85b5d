"""`--power SOURCE[,SOURCE...]` (issue 51 §5): parsing, building the sources, and the check
that each answers (at session start and in --dry-run).

The grammar and its parsing: pts.config.power_option.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pts.config.power_option import PowerSpecError, SourceSpec, parse
from pts.power.source import METER, PowerSource, PowerSourceError
from pts.tools import ipmitool, redfish

__all__ = ["PowerSpecError", "SourceSpec", "build", "check", "parse"]


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
    if spec.kind == "none":
        raise PowerSpecError("--power none builds no source")
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
