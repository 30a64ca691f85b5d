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

From the same reads: GETF-1 (every SEL answered; the suite asks SEL 000b, 001b and 011b, not
010b), GETF-5 (the capabilities each feature returns), NVMe-AD-31/32 (C9h's defaults: GDAEC-2/3
asked again in 4.4) and DSSDPSG-2 (C7h's current value against the NVMe power state in use,
Get Features 02h, its Maximum Power in Identify Controller and the DSSD power states log C4h
lists, pts.tools.ocp_page_facts).
"""

from __future__ import annotations

from pts.config.ocp_log_pages import DSSD_VALID
from pts.stored.host_rules import (
    FAIL,
    FEAT_02,
    ID_CTRL,
    NOT_APPLICABLE,
    NOT_CHECKED,
    PASS,
    V27,
    Evidence,
    rule,
)
from pts.stored.ocp_page_checks import Page
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
    # the current DSSD Power State depends on the Set Features C7h sent before (DSSDPSG-1):
    # only an answer is judged here (DSSDPSG-2, below, is decided where it can be)
    ("DSSDPSG-1", "C7h", (6, 0), "answer", "whether it is the state a Set Features C7h chose "
     "is not known: the suite sends none, and another host may have", 8490),
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


# --- 4.15.1's general rows, 4.4's C9h defaults and DSSDPSG-2, from the same reads --------

# 4.15.2's table (line 7366): no DSSD feature is Namespace scoped (GETF-5: NSSPEC 0b); C3h
# and C9h are not saveable, the others are (SVBL); C0h (Event Injection) is not read
SAVEABLE = {**{fid: s for _, fid, s, _ in SAVE}, "C5h": 1}
ONCS_SEL = "ONCS (bytes 521:520) bit 4 (Save field in Set Features, Select field in Get Features)"


def _sels_answered(f: dict, fid: str) -> tuple[list[str], list[str], Evidence]:
    """(SELs refused with a status that says not supported, SELs that failed otherwise, the
    evidence) of one feature; a refused current value answers for the SELs not asked."""
    got = f["dssd_features"][fid]
    cmd = f"nvme get-feature --feature-id=0x{fid[:2].lower()} --sel="
    if "refused" in got:
        said = got["refused"]
        bad = ["000b"]
        ev = Evidence(cmd + "0", "completion status (nvme-cli's words)", said)
        return (bad, [], ev) if any(r in said for r in REFUSALS) else ([], bad, ev)
    refused, failed, shown = [], [], {}
    for sel, (n, label) in SEL.items():
        value = got[sel]
        if isinstance(value, dict):
            said = value["refused"]
            (refused if any(r in said for r in REFUSALS) else failed).append(label)
            shown[n] = said[-120:]
        else:
            shown[n] = f"0x{value:08x}"
    return refused, failed, Evidence(cmd + "0, 1, 3", "Dword 0 by SEL", shown)


@rule(V27, "GETF-1", 7334)
def getf_1(f):
    oncs = f["id_ctrl"]["oncs"]
    evs, refused, failed = [Evidence(ID_CTRL, ONCS_SEL, f"0x{oncs:x}")], [], []
    for fid in NAMES:
        bad, other, ev = _sels_answered(f, fid)
        evs.append(ev)
        refused += [f"{fid} SEL {b}" for b in bad]
        failed += [f"{fid} SEL {b}" for b in other]
    if not oncs >> 4 & 1:
        return FAIL, ("ONCS bit 4 cleared: the controller does not support the Select field "
                      "of Get Features"), tuple(evs)
    if refused:
        return FAIL, ("refused as not supported: " + ", ".join(refused) + " (a feature refused "
                      "at SEL 000b is not asked the others)"), tuple(evs)
    if failed:
        return NOT_CHECKED, "read failed otherwise (evidence): " + "; ".join(failed), \
            tuple(evs)
    return NOT_CHECKED, ("SEL 000b, 001b and 011b answered for C2h-CBh; SEL 010b (saved) "
                         "is not sent by the suite, nor any SEL for C0h (Event Injection), so "
                         "whether every SEL is supported is not known"), tuple(evs)


@rule(V27, "GETF-5", 7355)
def getf_5(f):
    evs, bad, failed = [], [], []
    for fid in NAMES:
        verdict, why, ev, v = _feature(f, fid, ("capabilities",))
        evs += ev
        if verdict:
            if verdict == FAIL:
                bad.append(f"{fid} refused as not supported: no capabilities returned")
            else:
                failed.append(f"{fid}: {why}")
            continue
        cap, svbl = v["capabilities"], SAVEABLE[fid]
        wrong = [what for what, ok in (
            (f"reserved bits 7:3 0x{cap >> 3 & 0x1F:x}", not cap >> 3 & 0x1F),
            ("CHANG (bit 2) 0b", cap >> 2 & 1),
            ("NSSPEC (bit 1) 1b: the feature is not Namespace scoped", not cap >> 1 & 1),
            (f"SVBL (bit 0) {cap & 1}b: the text makes it {'' if svbl else 'not '}saveable",
             cap & 1 == svbl)) if not ok]
        if wrong:
            bad.append(f"{fid} capabilities 0x{cap:x}: " + ", ".join(wrong))
    if bad:
        return FAIL, "; ".join(bad), tuple(evs)
    if failed:
        return NOT_CHECKED, "; ".join(failed), tuple(evs)
    return PASS, ("C2h-CBh return bits 7:3 0, CHANG 1b, NSSPEC 0b and SVBL as 4.15.2's table "
                  "(C3h, C9h 0b, the others 1b); not judged: C0h (Event Injection), which "
                  "the suite does not ask"), tuple(evs)


def _aen_default(rid: str, line: int, bit: int, want: int, name: str):
    values = _get("C9h", (bit, bit), "values", {"default": (want,)})

    def judge(f):
        if "dssd_features" in f:
            verdict, why, ev = values(f)
            return verdict, (f"{name} (bit {bit}): {why}" if why.startswith("default")
                             else why), ev
        # a run recorded before the DSSD features were read: its support read of C9h (SEL 011b)
        got = f["features"]["C9h"]
        said = got.get("refused")
        ev = (Evidence("nvme get-feature --feature-id=0xc9 --sel=3", "Dword 0 (capabilities)",
                       got.get("capabilities", said and said[-160:])),)
        if said and any(r in said for r in REFUSALS):
            return FAIL, "DSSD Asynchronous Event Configuration feature (C9h) refused as " \
                "not supported", ev
        if said:
            return NOT_CHECKED, "the C9h read failed otherwise (evidence)", ev
        return NOT_CHECKED, (f"this run read C9h's capabilities only (recorded before the "
                             f"DSSD features were read): its default value (SEL 001b: {name} "
                             f"{want}b) is not known"), ev
    rule(V27, rid, line)(judge)


_aen_default("NVMe-AD-31", 450, 0, 1, "Error Reporting AEN Enabled")
_aen_default("NVMe-AD-32", 453, 1, 0, "Media Ready AEN Enabled")


def _dssd_states(f: dict) -> tuple[list[int], int | None, str, tuple[Evidence, ...]]:
    """The valid DSSD Power States (numbers, in watts) and the Minimum Valid DSSD Power State
    (DCLP-8): log C4h's descriptors with bit 7 set (DSSDPSD-1) where the page was decoded;
    else the text's numbering (4.8.11: a DSSD Power State's number is its watts, 1-127) and no
    minimum, said."""
    page = Page(f, 0xC4)
    unusable = page.unusable("DSSD Power State Descriptors")
    if unusable is not None:
        return list(range(1, 128)), None, (f"{unusable[1]}; the states taken as the text numbers "
                                     "them (4.8.11: a DSSD Power State's number is its "
                                     "watts, 1 to 127)"), unusable[2]
    desc = page.fields["dssd_power_state_descriptors"]
    valid = [n for n in range(1, 128) if desc[n] & DSSD_VALID]
    least = page.fields["minimum_valid_dssd_power_state"]
    return valid, least, f"log C4h lists {len(valid)} valid DSSD Power States", (
        page.field_ev("minimum_valid_dssd_power_state"),
        page.ev("bytes 143:17 (DCLP-9), bit 7 (valid) of each", valid))


@rule(V27, "DSSDPSG-2", 8495)
def dssdpsg_2(f):
    verdict, why, ev, v = _feature(f, "C7h", ("current",))
    if verdict:
        return verdict, why, ev
    reported, psds, in_use = v["current"] & 0x7F, f["id_ctrl"]["psds"], f["feature_02h"] & 0x1F
    ev += (Evidence(FEAT_02 + " -s 0 (current)", "Dword 0 bits 4:0 (PS)", in_use),
           Evidence(ID_CTRL, "Power State Descriptors: MP in watts (bytes 2048+32n)",
                    [(p["state"], p["watts"]) for p in psds]))
    if in_use >= len(psds):
        return NOT_CHECKED, (f"the NVMe power state in use, {in_use}, is not in Identify's "
                             f"table ({len(psds)} states; PWR-1)"), ev
    mp = psds[in_use]["watts"]
    said = f"C7h reports DSSD Power State {reported}; NVMe power state {in_use} ({mp} W) in use"
    if reported < mp:
        return FAIL, (f"{said}: below its Maximum Power, which neither DSSDPSG-2 (the lowest "
                      "state at or above it) nor DSSDPSG-1 allows (a selected DSSD Power State "
                      "runs an NVMe state whose Maximum Power is at most its number, 4.8.11 "
                      "line 3309)"), ev
    valid, least, source, c4 = _dssd_states(f)
    ev += c4
    lowest = min((n for n in valid if n >= mp), default=None)
    if lowest is None:
        return NOT_CHECKED, f"{said}; {source}, none at or above {mp} W", ev
    if reported == lowest:
        return PASS, (f"{said}: the lowest DSSD Power State at or above its Maximum Power "
                      f"({source}), as DSSDPSG-2 asks"), ev
    if least is not None and reported < least:
        return FAIL, (f"{said}: not {lowest}, the lowest valid at or above {mp} W ({source}; "
                      f"DSSDPSG-2), and below C4h's Minimum Valid DSSD Power State {least}, "
                      "which no Set Features C7h selects (DCLP-8: Invalid Field in Command), "
                      "so not DSSDPSG-1's either"), ev
    top = max(p["watts"] for p in psds if p["watts"] <= reported)
    chosen = [p["state"] for p in psds if p["watts"] == top]
    if in_use not in chosen:
        return FAIL, (f"{said}: not {lowest}, the lowest at or above {mp} W ({source}; "
                      f"DSSDPSG-2), and not a state a Set Features C7h chose (DSSDPSG-1): "
                      f"selecting {reported} runs NVMe power state "
                      f"{', '.join(map(str, chosen))} ({top} W, 4.8.11)"
                      ), ev
    return NOT_CHECKED, (f"{said}: not {lowest}, the lowest at or above {mp} W ({source}), "
                         f"as DSSDPSG-2 asks unless a Set Features C7h selected the state "
                         f"(DSSDPSG-1: selecting {reported} runs NVMe power state {in_use}); "
                         "the suite sends none, but another host or a saved value (SDSSDPS-10) "
                         "may have"), ev
