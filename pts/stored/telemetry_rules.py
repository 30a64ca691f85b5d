"""The OCP telemetry requirements (v2.7 4.9.7 TEL-*) a host decides from which telemetry logs
the drive answers (Telemetry Host-Initiated 07h, Controller-Initiated 08h: facts["logs"], as
pts.tools.nvme_facts.read_log_support reads them) and Identify Controller's LPA. Rules are
added to pts.stored.host_rules.RULES; pts.stored.host_judge applies them.

A requirement on the logs' header or data areas is FAIL when the drive refuses a log it names
as not supported (the refusal is the evidence: there is no header nor data area to meet it);
when the logs are answered, the run keeps their first 512 bytes but does not decode the
header's fields nor gather the data areas, so such a requirement is NOT CHECKED saying which
field. TEL-26 is conditional on Data Area 4: NOT APPLICABLE to a drive with no telemetry log.
"""

from __future__ import annotations

from pts.stored.host_rules import (
    FAIL,
    ID_CTRL,
    NOT_APPLICABLE,
    NOT_CHECKED,
    PASS,
    V27,
    Evidence,
    rule,
)
from pts.tools.ocp_log_read import REFUSALS

GET_LOG = "nvme get-log --log-id={} --log-len=512 --raw-binary"
NAMES = {"07h": "Telemetry Host-Initiated", "08h": "Telemetry Controller-Initiated"}
BOTH = ("07h", "08h")


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


def _lpa(f: dict) -> tuple[int, Evidence]:
    lpa = f["id_ctrl"]["lpa"]
    return lpa, Evidence(ID_CTRL, "LPA (byte 261) bit 3 (telemetry logs), bit 6 (Data Area 4)",
                         f"0x{lpa:x}")


def _on_logs(logs: tuple[str, ...], needs: str):
    """A requirement on `needs` (a header field or data area) of the logs `logs`."""
    def check(f):
        found = [(log, *log_answer(f, log)) for log in logs]
        evs = (*(ev for _, _, ev in found), _lpa(f)[1])
        refused = [log for log, ok, _ in found if ok is False]
        if refused:
            return FAIL, ", ".join(f"{NAMES[x]} log {x}" for x in refused) + \
                f" refused as not supported: no {needs}", evs
        if any(ok is None for _, ok, _ in found):
            return NOT_CHECKED, f"the telemetry log read failed otherwise (evidence): {needs}", \
                evs
        return NOT_CHECKED, f"log {', '.join(logs)} answered; {needs}: not decoded by the run", \
            evs
    return check


# requirement ID -> (line, the logs it is about, what of them it asks)
ON_LOGS = {
    "TEL-4": (4213, BOTH, "Reason Identifier (the most recent failure identifier)"),
    "TEL-5": (4216, BOTH, "Data Areas 1 and 2 of the sizes the table asks (Data Area 1: "
              "32,768 bytes)"),
    "TEL-6": (4239, ("07h",), "Data Area 1 Last Block (0040h as the factory default)"),
    "TEL-7": (4242, ("08h",), "Data Area 1 Last Block (0040h as the factory default)"),
    "TEL-8": (4245, ("07h",), "Data Area 1 to update every ten minutes"),
    "TEL-14": (4261, BOTH, "Data Area 1 and 2 data for the OCP plugin to decode"),
    "TEL-15": (4263, BOTH, "Telemetry Data Area 1 and Data Area 2"),
    "TEL-22": (4280, BOTH, "NVM subsystem scope of the telemetry logs"),
    "TEL-23": (4284, BOTH, "statistics (from C0h, 02h, 09h) in Data Area 1"),
    "TEL-25": (4291, BOTH, "statistics descriptors (their Host Hint Type) in Data Area 1"),
}
for _rid, (_line, _logs, _needs) in ON_LOGS.items():
    rule(V27, _rid, _line)(_on_logs(_logs, _needs))


@rule(V27, "TEL-26", 4295)
def tel_26(f):
    lpa, lpa_ev = _lpa(f)
    found = [log_answer(f, log) for log in BOTH]
    evs = (lpa_ev, *(ev for _, ev in found))
    if lpa >> 6 & 1:
        return PASS, "LPA bit 6 (Telemetry Data Area 4 supported) set", evs
    if not lpa >> 3 & 1 and all(ok is False for ok, _ in found):
        return NOT_APPLICABLE, ("no telemetry log (LPA bit 3 cleared, logs 07h and 08h "
                                "refused as not supported): no Data Area 4 to use"), evs
    return NOT_CHECKED, ("LPA bit 6 cleared; whether the drive uses Data Area 4 (the logs' "
                         "Data Area 4 Last Block) is not decoded by the run"), evs
