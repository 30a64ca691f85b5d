"""The OCP requirements on the DSSD features (v2.7 4.15.5-4.15.24, Feature Identifiers C2h-CBh)
that a host decides from Get Features alone, as pts.tools.dssd_features read them
(facts["dssd_features"]["C2h"]: current, default and capabilities, or the drive's words
refusing them). Rules are added to pts.stored.host_rules.RULES; pts.stored.host_judge applies
them.

"Unless otherwise specified, the device shall support all the features defined in this
section" (4.15, line 7329), and a feature not supported answers Invalid Field in Command
(GETF-2): a feature refused so is FAIL on each of its Get IDs, with the refusal as the
evidence. The Set Features IDs are about the command a host sends, which the suite never
sends (it would change the drive's configuration): they stay NOT CHECKED
(pts.config.ocp_id_classes), but for each feature's Save bit row ("the device shall (not)
support setting this bit to 1b"), which the Saveable bit of Get Features SEL 011b decides.
"""

from __future__ import annotations

from pts.stored.host_rules import (
    FAIL,
    NOT_APPLICABLE,
    NOT_CHECKED,
    PASS,
    V27,
    Evidence,
    rule,
)
from pts.tools.ocp_log_read import REFUSALS

NAMES = {"C2h": "PLP Failure Mode", "C3h": "Clear PCIe Correctable Error Counters",
         "C4h": "Enable IEEE1667 Silo", "C5h": "Latency Monitor",
         "C6h": "PLP Health Check Interval", "C7h": "DSSD Power State",
         "C8h": "Telemetry Profile", "C9h": "DSSD Asynchronous Event Configuration",
         "CAh": "Idle Wake Up Time Configuration", "CBh": "Max PCIe Interface Configuration"}
SEL = {"current": (0, "000b (current)"), "default": (1, "001b (default)"),
       "capabilities": (3, "011b (capabilities)")}

# The Get IDs: (ID, feature, field (bits hi, lo of Dword 0), check, its argument, line).
# Checks: "reserved" the bits are zero in the current and default values; "zero" Dword 0 is
# zero in both; "values" the field of each SEL the argument names is one of the values the
# text gives for it; "read" the text states no value (xx): the field is there when both SELs
# answer, and what else the ID asks (the argument) is said; "answer" the ID asks what a Get
# cannot show (the argument): a refusal decides it, an answer leaves it NOT CHECKED.
GET = (
    ("GROWTM-1", "C2h", (31, 3), "reserved", None, 7977),
    ("GROWTM-2", "C2h", (2, 0), "values",
     {"current": (0b001, 0b010, 0b011), "default": (0b001,)}, 7991),
    ("GPCIE-1", "C3h", (31, 0), "zero", None, 8085),
    ("G1667-1", "C4h", (31, 3), "reserved", None, 8149),
    ("G1667-2", "C4h", (2, 0), "values",
     {"current": (0b000, 0b001), "default": (0b000, 0b001)}, 8155),
    ("LMGF-1", "C5h", (31, 0), "zero", None, 8327),
    ("GPLPI-1", "C6h", (31, 16), "reserved", None, 8391),
    ("GPLPI-2", "C6h", (15, 0), "values", {"default": (0x0000, 0x000F)}, 8406),
    ("GDSSDPS-1", "C7h", (31, 7), "reserved", None, 8502),
    ("GDSSDPS-2", "C7h", (6, 0), "read", "", 8513),
    ("TEL-CFG-GF-2", "C8h", (31, 8), "reserved", None, 8607),
    ("TEL-CFG-GF-3", "C8h", (7, 0), "read", "", 8617),
    ("GDAEC-1", "C9h", (31, 2), "reserved", None, 8735),
    ("GDAEC-2", "C9h", (0, 0), "values", {"default": (1,)}, 8747),
    ("GDAEC-3", "C9h", (1, 1), "values", {"default": (0,)}, 8763),
    ("GIDLE-1", "CAh", (31, 16), "reserved", None, 8868),
    ("GIDLE-2", "CAh", (15, 0), "read", "whether the default is the minimum value the "
     "device supports is not known to a host", 8873),
    ("MPCSG-1", "CBh", (31, 16), "reserved", None, 8998),
    ("MPCSG-2", "CBh", (15, 0), "read", "", 9011),
    # the current DSSD Power State depends on the Set Features C7h sent before (DSSDPSG-1)
    # or on the DSSD power states log C4h lists (DSSDPSG-2): only an answer is judged here
    ("DSSDPSG-1", "C7h", (6, 0), "answer", "whether it is the state a Set Features C7h chose "
     "is not known: the suite sends none, and another host may have", 8490),
    ("DSSDPSG-2", "C7h", (6, 0), "answer", "whether it is the lowest DSSD Power State at or "
     "above the current NVMe power state's Maximum Power needs log C4h's DSSD power "
     "states, not compared here", 8495),
)
# The Set IDs a Get answer decides: each feature's Save (SV) bit row, (ID, feature, the
# Saveable bit the text asks for, line): saveable features "shall support setting this bit
# to 1b" (a feature refused as not supported cannot be saved: FAIL); C3h and C9h "shall not
# support setting this bit to 1b" (refused: NOT APPLICABLE, nothing to save). C5h's
# (LMSF-10, line 8216) is left to the latency monitor's rules, which send Set Features C5h
SAVE = (("SROWTM-10", "C2h", 1, 7932), ("CPCIE-10", "C3h", 0, 8049),
        ("S1667-10", "C4h", 1, 8125),
        ("SPLPI-10", "C6h", 1, 8364), ("SDSSDPS-10", "C7h", 1, 8466),
        ("TEL-CFG-SF-10", "C8h", 1, 8576), ("SDAEC-10", "C9h", 0, 8668),
        ("SIDLE-10", "CAh", 1, 8830), ("MPCS-10", "CBh", 1, 8937))


def _field(value: int, bits: tuple[int, int]) -> int:
    hi, lo = bits
    return value >> lo & ((1 << (hi - lo + 1)) - 1)


def _feature(f: dict, fid: str, sels: tuple[str, ...]):
    """(verdict or None, why, evidence, values by SEL): a refused feature decides (FAIL when
    refused as not supported, else NOT CHECKED); KeyError when the run did not read it."""
    got = f["dssd_features"][fid]
    name = f"{NAMES[fid]} feature ({fid})"
    cmd = f"nvme get-feature --feature-id=0x{fid[:2].lower()} --sel="
    if "refused" in got:
        ev = (Evidence(cmd + "0", "completion status (nvme-cli's words)", got["refused"]),)
        if any(r in got["refused"] for r in REFUSALS):
            return FAIL, (f"{name} refused as not supported (GETF-2); 4.15 requires every "
                          "DSSD feature (line 7329)"), ev, {}
        return NOT_CHECKED, f"the {name} read failed otherwise (evidence)", ev, {}
    evs, values = [], {}
    for sel in sels:
        value = got[sel]
        evs.append(Evidence(cmd + str(SEL[sel][0]), f"Dword 0, SEL {SEL[sel][1]}",
                            value if isinstance(value, dict) else f"0x{value:08x}"))
        if isinstance(value, dict):
            return NOT_CHECKED, (f"{name}: SEL {SEL[sel][1]} not answered "
                                 f"({value['refused'][-120:]})"), tuple(evs), {}
        values[sel] = value
    return None, "", tuple(evs), values


def _get(fid: str, bits: tuple[int, int], check: str, arg):
    where = f"bits {bits[0]}:{bits[1]}"

    def judge(f):
        sels = tuple(arg) if check == "values" else ("current", "default")
        verdict, why, ev, v = _feature(f, fid, sels)
        if verdict:
            return verdict, why, ev
        got = {s: _field(x, bits) for s, x in v.items()}
        shown = ", ".join(f"{s} 0x{x:x}" for s, x in got.items())
        if check in ("reserved", "zero"):
            bad = [s for s, x in got.items() if x]
            what = "reserved " if check == "reserved" else "Dword 0 "
            if bad:
                return FAIL, f"{what}{where} not zero: {shown}", ev
            return PASS, f"{what}{where} zero at SEL 000b and 001b", ev
        if check == "values":
            allowed = {s: ", ".join(f"0x{a:x}" for a in ok) for s, ok in arg.items()}
            bad = [f"{s} value's {where} 0x{got[s]:x} (the text allows {allowed[s]})"
                   for s, ok in arg.items() if got[s] not in ok]
            if bad:
                return FAIL, "; ".join(bad), ev
            return PASS, "; ".join(f"{s} value's {where} 0x{got[s]:x} (the text allows "
                                   f"{allowed[s]})" for s in arg), ev
        if check == "answer":
            return NOT_CHECKED, f"answered ({where}: {shown}); {arg}", ev
        return PASS, f"answered: {where} {shown}" + (f"; not judged: {arg}" if arg else ""), ev
    return judge


def _save(fid: str, saveable: int):
    def judge(f):
        verdict, why, ev, v = _feature(f, fid, ("capabilities",))
        if verdict == FAIL and not saveable:     # no feature, so no Save of it: vacuous
            return NOT_APPLICABLE, (why + ": its Set Features, and so a Save, are not "
                                    "supported (the feature's Get IDs FAIL)"), ev
        if verdict:
            return verdict, why, ev
        svbl = v["capabilities"] & 1
        asked = "saveable" if saveable else "not saveable"
        if svbl != saveable:
            return FAIL, (f"capabilities bit 0 (SVBL) {svbl}b: the text makes {fid} {asked} "
                          f"(4.15.2), so Save {'must' if saveable else 'must not'} be "
                          "supported"), ev
        return PASS, f"capabilities bit 0 (SVBL) {svbl}b: {asked}, as the text asks", ev
    return judge


for _rid, _fid, _bits, _check, _arg, _line in GET:
    rule(V27, _rid, _line)(_get(_fid, _bits, _check, _arg))
for _rid, _fid, _saveable, _line in SAVE:
    rule(V27, _rid, _line)(_save(_fid, _saveable))
