"""The OCP telemetry requirements (v2.7 4.9.7 TEL-*, and NVMe-OPT-6 on the Telemetry Log Changed
event) a host decides from which telemetry logs the drive answers (Telemetry Host-Initiated
07h, Controller-Initiated 08h, the DSSD Telemetry String log C9h: facts["logs"], as
pts.tools.nvme_facts.read_log_support reads them) and Identify Controller's LPA. Rules are
added to pts.stored.host_rules.RULES; pts.stored.host_judge applies them.

A requirement on the logs' header, data areas, profiles or strings is FAIL when the drive
refuses a log it names as not supported (the refusal is the evidence: there is no header nor
data area to meet it; the v2.7 text asks for the logs: STD-LOG-7, STD-LOG-8, TELSLG-*); when
the logs are answered, the run keeps their first 512 bytes but does not decode the header's
fields nor gather the data areas, so such a requirement is NOT CHECKED saying which field.
TEL-26 is conditional on Data Area 4: NOT APPLICABLE to a drive with no telemetry log. TEL-21
and NVMe-OPT-6 restrict when a capture or an event may come: NOT APPLICABLE to a drive that
has no Controller-Initiated log, or sends no Telemetry Log Changed event (LPA bit 3 cleared);
TEL-12 asks for that event: FAIL without it.
"""

from __future__ import annotations

from pts.stored.host_rules import (
    FAIL,
    NOT_APPLICABLE,
    NOT_CHECKED,
    PASS,
    V27,
    Evidence,
    id_ctrl_field,
    rule,
)
from pts.stored.log_rules import log_answer
from pts.tools.ocp_log_read import REFUSALS

NAMES = {"07h": "Telemetry Host-Initiated", "08h": "Telemetry Controller-Initiated",
         "C9h": "Telemetry String"}
BOTH = ("07h", "08h")


def _lpa(f: dict) -> tuple[int, Evidence]:
    return id_ctrl_field(f, "lpa", "LPA (byte 261) bit 3 (telemetry logs), bit 6 (Data Area 4)")


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
    # the operational/event history the logs carry, their Event FIFOs, the Reason Identifier
    # a failure sets, the telemetry profiles (whose number log C4h and feature C8h give)
    "TEL-1": (4206, BOTH, "operational/event history and critical parameters for debug"),
    "TEL-10": (4250, BOTH, "Timestamp Events in the Event FIFOs"),
    "TEL-11": (4253, BOTH, "debug information to root-cause what made a controller-initiated "
               "capture"),
    "TEL-13": (4259, BOTH, "Error ID (TELRI-1) to set non-zero on a failure"),
    "TEL-19": (4267, ("07h",), "host access to specific host telemetry (TP4109a)"),
    # the Telemetry String log (C9h), which decodes the logs' statistics and events
    "TEL-20": (4273, ("C9h",), "identifiers kept across a firmware update"),
    "TEL-24": (4288, ("C9h",), "strings matching the Statistic Identifiers' table"),
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


# requirement ID -> (line, what of the telemetry profiles it asks): the DSSD Telemetry Profile
# feature (C8h, v2.7 4.15.17-18) selects the profile, so a drive without it has one at most
PROFILES = {"TEL-16": (4264, "two Telemetry Profiles"),
            "TEL-17": (4265, "Telemetry Profile 0 as the factory default"),
            "TEL-18": (4266, "Telemetry Profile 1 sized for maximum debuggability")}
GET_FEATURE = "nvme get-feature --feature-id=0xc8 --sel=3: Telemetry Profile"


def _profiles(needs: str):
    on_logs = _on_logs(BOTH, needs)

    def check(f):
        verdict, why, evs = on_logs(f)
        if verdict == FAIL or "failed otherwise" in why:
            return verdict, why, evs
        got = f["features"]["C8h"]
        evs += (Evidence(GET_FEATURE, "Dword 0 (capabilities)",
                         got.get("capabilities", got.get("refused"))),)
        if "refused" in got and any(r in got["refused"] for r in REFUSALS):
            return FAIL, f"Telemetry Profile feature (C8h) refused as not supported: {needs} " \
                "cannot be selected", evs
        if "refused" in got:
            return NOT_CHECKED, "the Telemetry Profile feature (C8h) read failed otherwise", evs
        return NOT_CHECKED, f"feature C8h supported; {needs}: its profiles not decoded (log " \
            "C4h's Telemetry Profiles Supported, Data Area sizes per profile)", evs
    return check


for _rid, (_line, _needs) in PROFILES.items():
    rule(V27, _rid, _line)(_profiles(_needs))


def _notices(f: dict) -> tuple[int, Evidence]:
    lpa, ev = id_ctrl_field(f, "lpa", "LPA (byte 261) bit 3 (Telemetry Log Notices: the "
                            "Telemetry Log Changed event)")
    return lpa >> 3 & 1, ev


@rule(V27, "TEL-12", 4257)
def tel_12(f):
    notices, ev = _notices(f)
    if not notices:
        return FAIL, ("no Telemetry Log Changed event: LPA bit 3 (Telemetry Log Notices) "
                      "cleared (NVMe-OPT-8)"), (ev,)
    return NOT_CHECKED, ("Telemetry Log Notices supported; the event on a new Reason "
                         "Identifier needs a failure, which the run does not cause"), (ev,)


@rule(V27, "NVMe-OPT-6", 690)
def opt_6(f):
    notices, ev = _notices(f)
    if not notices:
        return NOT_APPLICABLE, ("the drive sends no Telemetry Log Changed event (LPA bit 3 "
                                "cleared; NVMe-OPT-8 asks it set): none for periodic logging"), \
            (ev,)
    return NOT_CHECKED, ("Telemetry Log Notices supported; when the events come needs them "
                         "watched over time (the kernel's driver takes them)"), (ev,)


@rule(V27, "TEL-21", 4277)
def tel_21(f):
    ok, ev = log_answer(f, "08h")
    if ok is None:
        return NOT_CHECKED, "the Telemetry Controller-Initiated log read failed otherwise", (ev,)
    if ok is False:
        return NOT_APPLICABLE, ("no Telemetry Controller-Initiated log (08h refused as not "
                                "supported; STD-LOG-8 asks it): none generated at all"), (ev,)
    return NOT_CHECKED, ("when the drive generates a controller-initiated capture needs "
                         "watching Telemetry Controller-Initiated Data Available over time"), \
        (ev,)
