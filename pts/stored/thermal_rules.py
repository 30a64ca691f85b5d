"""The OCP thermal throttling requirements (v2.7 9.2 TTHROTTLE-*) a field of Identify
Controller decides: the Warning and Critical Composite Temperature Thresholds (WCTEMP,
CCTEMP, bytes 267:266 and 269:268, in kelvins). The others ask how the drive behaves when hot
(throttling at 77 °C, the asynchronous events, the SMART warning bit): the run does not heat
the drive, so they stay NOT CHECKED by their class. Rules are added to
pts.stored.host_rules.RULES; pts.stored.host_judge applies them.
"""

from __future__ import annotations

from pts.stored.host_rules import FAIL, ID_CTRL, PASS, V27, Evidence, rule


def _threshold(name: str, offset: str, asked: int):
    def check(f):
        v = f["id_ctrl"][name]
        ev = (Evidence(ID_CTRL, f"{name.upper()} (bytes {offset}), kelvins", f"0x{v:x}"),)
        said = f"{name.upper()} {v:04X}h ({v - 273} °C; {asked:04X}h, {asked - 273} °C asked)"
        return (PASS if v == asked else FAIL), said, ev
    return check


rule(V27, "TTHROTTLE-9", 9779)(_threshold("wctemp", "267:266", 0x15E))
rule(V27, "TTHROTTLE-10", 9782)(_threshold("cctemp", "269:268", 0x166))
