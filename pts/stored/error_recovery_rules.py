"""The OCP Error Recovery log page's requirements (v2.7 4.8.7.2 EREC-*: the fields of log C1h,
512 bytes), judged from whether the drive answers log C1h (facts["logs"]["C1h"], as
pts.tools.nvme_facts.read_log_support reads it). Refused as not supported: each field is
missing, FAIL with the refusal as the evidence. Answered: the run keeps the first 512 bytes
but does not decode the fields (their values' rules ask what a panic would set), NOT CHECKED
naming the field. Not read: NOT CHECKED (pts.stored.host_rules.judge). Rules are added to
pts.stored.host_rules.RULES; pts.stored.host_judge applies them.

A Meta-configured drive is asked the opposite (META-CONF-4: no C1h); that customer's
configuration is not the drive's to report (pts.config.ocp_id_classes), so these rules judge
the standard text.
"""

from __future__ import annotations

from pts.stored.host_rules import FAIL, NOT_CHECKED, V27, rule
from pts.stored.log_rules import log_answer

# requirement ID -> (line, bytes, field)
FIELDS = {
    "EREC-1": (1954, "1:0", "Error Reset Wait Time"),
    "EREC-2": (1963, "2", "Error Reset Action"),
    "EREC-3": (2005, "3", "Device Recovery Action 1"),
    "EREC-4": (2036, "11:4", "Error ID"),
    "EREC-5": (2053, "15:12", "Device Capabilities"),
    "EREC-6": (2074, "16", "Vendor Specific Recovery Opcode"),
    "EREC-7": (2079, "19:17", "Reserved"),
    "EREC-8": (2084, "23:20", "Vendor Specific Command CDW12"),
    "EREC-9": (2093, "27:24", "Vendor Specific Command CDW13"),
    "EREC-13": (2100, "28", "Vendor Specific Command Timeout"),
    "EREC-14": (2112, "29", "Device Recovery Action 2"),
    "EREC-15": (2127, "30", "Device Recovery Action 2 Timeout"),
    "EREC-16": (2132, "31", "Error / Assert Count"),
    "EREC-17": (2141, "63:32", "Previous Error IDs"),
    "EREC-10": (2148, "493:64", "Reserved"),
    "EREC-11": (2151, "495:494", "Log Page Version"),
    "EREC-12": (2155, "511:496", "Log Page GUID"),
}


def _field(at: str, name: str):
    def check(f):
        ok, ev = log_answer(f, "C1h")
        what = f"{name} (log C1h bytes {at})"
        if ok is False:
            return FAIL, f"Error Recovery log C1h refused as not supported: no {what}", (ev,)
        if ok is None:
            return NOT_CHECKED, f"log C1h's read failed otherwise (evidence): {what}", (ev,)
        return NOT_CHECKED, f"log C1h answered; {what}: not decoded by the run", (ev,)
    return check


for _rid, (_line, _at, _name) in FIELDS.items():
    rule(V27, _rid, _line)(_field(_at, _name))
