"""The OCP requirements that a standard log page answered or refused, or a log field of
Identify Controller, decides (v2.7 4.8.1 STD-LOG-*, 4.11 SELFTST-3), judged from
nvme_facts.read_log_support's facts (facts["logs"]["01h"] = {"bytes": n} or {"refused": the
drive's words}) and Identify Controller. Rules are added to pts.stored.host_rules.RULES;
pts.stored.host_judge applies them.

A log is supported when Get Log Page returns it; refused with Invalid Field in Command or
Invalid Log Page, it is not (FAIL); refused for another reason, or not read, NOT CHECKED.
"""

from __future__ import annotations

from pts.stored.host_rules import (
    FAIL,
    ID_CTRL,
    NOT_CHECKED,
    PASS,
    V27,
    Evidence,
    id_ctrl_field,
    rule,
)
from pts.tools.ocp_log_read import REFUSALS

GET_LOG = "nvme get-log --log-id={} --log-len=512 --raw-binary"

# requirement ID -> (line, the logs it asks for, their names)
SUPPORT = {
    "STD-LOG-1": (782, ("01h",), "Error Information"),
    "STD-LOG-2": (783, ("02h",), "SMART / Health Information"),
    "STD-LOG-5": (792, ("03h",), "Firmware Slot Information"),
    "STD-LOG-6": (793, ("05h",), "Commands Supported and Effects"),
    "STD-LOG-7": (794, ("07h",), "Telemetry Host-Initiated"),
    "STD-LOG-8": (795, ("08h",), "Telemetry Controller-Initiated"),
    "STD-LOG-9": (796, ("0Dh",), "Persistent Event"),
    "STD-LOG-13": (852, ("06h",), "Device Self-test"),
    "STD-LOG-14": (853, ("14h",), "Command and Feature Lockdown"),
    "STD-LOG-15": (855, ("19h",), "Physical Interface Receiver Eye Opening Measurement"),
    "STD-LOG-24": (912, ("25h",), "Power Measurement"),
    "STD-LOG-27": (927, ("12h", "13h"), "Feature Identifiers Supported and Effects, NVMe-MI "
                   "Commands Supported and Effects"),
}


def log_answer(f: dict, log: str) -> tuple[bool | None, Evidence]:
    """True: the drive answered `log`; False: refused as not supported (Invalid Field in
    Command, Invalid Log Page); None: refused otherwise (a timeout, ...). KeyError when the
    run did not ask."""
    got = f["logs"][log]
    ev = Evidence(GET_LOG.format("0x" + log[:2].lower()), f"log {log}",
                  f"{got['bytes']} bytes" if "bytes" in got else got["refused"][-160:])
    if "bytes" in got:
        return True, ev
    return (False if any(r in got["refused"] for r in REFUSALS) else None), ev


def _support(logs: tuple[str, ...], name: str):
    def check(f):
        found = [log_answer(f, log) for log in logs]
        evs = tuple(ev for _, ev in found)
        if any(ok is False for ok, _ in found):
            refused = [log for log, (ok, _) in zip(logs, found, strict=True) if ok is False]
            return FAIL, f"{name}: log {', '.join(refused)} refused as not supported", evs
        if any(ok is None for ok, _ in found):
            return NOT_CHECKED, f"{name}: the read failed otherwise (evidence)", evs
        return PASS, f"{name}: log {', '.join(logs)} answered", evs
    return check


for _rid, (_line, _logs, _name) in SUPPORT.items():
    rule(V27, _rid, _line)(_support(_logs, _name))


@rule(V27, "STD-LOG-17", 866)
def std_log_17(f):
    verdict, why, evs = _support(("09h",), "Endurance Group Information")(f)
    n, ev = id_ctrl_field(f, "endgidmax", "ENDGIDMAX (bytes 341:340)", as_hex=False)
    evs += (ev,)
    if verdict == PASS and n != 1:
        return FAIL, why + f"; {n} Endurance Groups (one asked)", evs
    return verdict, why + (f"; ENDGIDMAX {n}" if verdict == PASS else ""), evs


@rule(V27, "STD-LOG-18", 869)
def std_log_18(f):
    lpa, ev = id_ctrl_field(f, "lpa", "LPA (byte 261) bit 0 (SMART per namespace)")
    return (FAIL if lpa & 1 else PASS), f"LPA bit 0 = {lpa & 1}", (ev,)


@rule(V27, "STD-LOG-22", 887)
def std_log_22(f):
    pels, ev = id_ctrl_field(f, "pels", "PELS (bytes 355:352), 64 KiB units", as_hex=False)
    size = pels * 64 << 10
    return (PASS if size >= 5 << 20 else FAIL), f"Persistent Event Log up to {size} bytes " \
        "(5 MiB asked)", (ev,)


@rule(V27, "SELFTST-3", 7050)
def selftst_3(f):
    c = f["id_ctrl"]
    ev = (Evidence(ID_CTRL, "OACS (byte 256) bit 4, EDSTT (bytes 317:316, minutes)",
                   (f"0x{c['oacs']:x}", c["edstt"])),)
    if not c["oacs"] >> 4 & 1:
        return FAIL, "no Device Self-test (OACS bit 4 cleared; NVMe-AD-12)", ev
    return (PASS if c["edstt"] <= 30 else FAIL), f"EDSTT {c['edstt']} minutes", ev
