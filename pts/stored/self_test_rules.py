"""The OCP device self-test requirements (v2.7 4.10 SELFTST-*) beyond SELFTST-3 (EDSTT, in
pts.stored.log_rules): each is about a self-test operation, which the Device Self-test command
starts. A drive that does not support the command (Identify Controller OACS bit 4 cleared,
which NVMe-AD-12 asks set) cannot meet them: FAIL, with OACS and log 06h's answer as the
evidence. A drive that supports it: NOT CHECKED, as the run starts no self-test (it would
disrupt the drive: --destructive's remit) and reads no result from log 06h. SELFTST-9 (the
vendor's minimum LBAs) is a document: not judged here. Rules are added to
pts.stored.host_rules.RULES; pts.stored.host_judge applies them.
"""

from __future__ import annotations

from pts.stored.host_rules import FAIL, ID_CTRL, NOT_CHECKED, V27, Evidence, rule
from pts.stored.log_rules import log_answer

# requirement ID -> (line, what of the self-test operation it asks)
OPERATION = {
    "SELFTST-1": (6964, "the segments 1-10 each test performs, with their failure criteria"),
    "SELFTST-2": (7047, "a short self-test (STC 1h) done within 2 minutes"),
    "SELFTST-4": (7053, "a vendor-specific self-test (STC Eh) done within 2 seconds"),
    "SELFTST-5": (7057, "no failure for running out of time"),
    "SELFTST-6": (7061, "an extended self-test (STC 2h) ending after all allocated LBAs"),
    "SELFTST-7": (7065, "segments 1 to 3 and 8 in STC 1h and Eh"),
    "SELFTST-10": (7077, "a reissued self-test continuing with the next LBAs"),
    "SELFTST-11": (7088, "a self-test that destroys no user data"),
}


def _operation(asks: str):
    def check(f):
        oacs = f["id_ctrl"]["oacs"]
        evs = [Evidence(ID_CTRL, "OACS (byte 256) bit 4 (Device Self-test)", f"0x{oacs:x}")]
        if "06h" in f.get("logs", {}):
            evs.append(log_answer(f, "06h")[1])
        if not oacs >> 4 & 1:
            return FAIL, f"no Device Self-test command (OACS bit 4 cleared): {asks} cannot " \
                "be met", tuple(evs)
        return NOT_CHECKED, f"Device Self-test supported; {asks}: needs a self-test run, " \
            "which the run does not start", tuple(evs)
    return check


for _rid, (_line, _asks) in OPERATION.items():
    rule(V27, _rid, _line)(_operation(_asks))
