"""The OCP Datacenter NVMe SSD Specification's requirements a field of Identify, a feature or a
log decides, judged from the facts a run read (pts.tools.nvme_facts: Facts.values): PWR,
NVMe-CFG, NVMe-AD, NVMe-IO, NVMe-OPT here; FDP in pts.stored.fdp_rules. Pure: facts in,
verdicts out; every rule keyed by (specification version, requirement ID).

Each verdict carries its evidence: what was read (the command and the structure, byte offset
and field), the value, and the line of the specification text that asks (v2.7: the Markdown
of circulardrives/cdi-grading-tool @427b743c, docs/Datacenter NVMe SSD Specification v2.7
Final.md; the line where the ID stands). A requirement a field only partly decides is judged
on that part and says which part it did not judge; one that needs what a host cannot read
(a power meter, the vendor's documents, the controller registers) is NOT CHECKED with why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

PASS, FAIL = "PASS", "FAIL"
NOT_APPLICABLE, NOT_CHECKED = "NOT APPLICABLE", "NOT CHECKED"
V27 = "2.7"
ID_CTRL = "nvme id-ctrl -b: Identify Controller"
ID_NS = "nvme id-ns -b: Identify Namespace"
EFFECTS = "nvme get-log --log-id=0x05 --raw-binary: Commands Supported and Effects"
FEAT_02 = "nvme get-feature -f 0x02"


@dataclass(frozen=True)
class Evidence:
    source: str        # the command and the structure it returned
    where: str         # byte offset / field
    value: object


@dataclass(frozen=True)
class Verdict:
    version: str
    req_id: str
    verdict: str       # PASS, FAIL, NOT APPLICABLE, NOT CHECKED
    why: str
    line: int          # the line of the specification text
    evidence: tuple[Evidence, ...] = ()

    def as_record(self) -> dict:
        return {"type": "host_verdict", "version": self.version, "id": self.req_id,
                "verdict": self.verdict, "why": self.why, "line": self.line,
                "evidence": [e.__dict__ for e in self.evidence]}


Rule = Callable[[dict], tuple[str, str, tuple[Evidence, ...]]]
RULES: dict[tuple[str, str], tuple[int, Rule]] = {}


def rule(version: str, req_id: str, line: int):
    def add(fn: Rule) -> Rule:
        RULES[(version, req_id)] = (line, fn)
        return fn
    return add


def judge(facts: dict, version: str = V27, rules: dict | None = None) -> list[Verdict]:
    """Every rule of `version` applied to `facts` (Facts.values, plus `rated_watts` when the
    drive's rated power envelope is known). A rule whose facts were not read (a refused log,
    a structure the run did not keep) is NOT CHECKED naming it."""
    out = []
    for (ver, rid), (line, fn) in sorted((rules or RULES).items()):
        if ver != version:
            continue
        try:
            verdict, why, ev = fn(facts)
        except KeyError as missing:
            verdict, why, ev = NOT_CHECKED, f"not read in this run: {missing.args[0]}", ()
        out.append(Verdict(ver, rid, verdict, why, line, ev))
    return out


def id_ctrl_field(f: dict, name: str, where: str, as_hex: bool = True) -> tuple[int, Evidence]:
    """A field of Identify Controller as the facts hold it, and its evidence: `where` its bytes
    and bits; the value in hex (a bit field), or as read (`as_hex` False: a count, a size)."""
    v = f["id_ctrl"][name]
    return v, Evidence(ID_CTRL, where, f"0x{v:x}" if as_hex else v)


def _bit(value: int, bit: int) -> int:
    return value >> bit & 1


def _need_bits(source: str, name: str, offset: int, value: int, bits: dict[int, str]):
    """PASS when each bit of `bits` is set in the field, else FAIL naming the clear ones."""
    clear = [f"bit {b} ({what})" for b, what in bits.items() if not _bit(value, b)]
    ev = (Evidence(source, f"{name} (byte {offset})", f"0x{value:x}"),)
    if clear:
        return FAIL, f"{name} 0x{value:x}: " + ", ".join(clear) + " cleared", ev
    return PASS, f"{name} 0x{value:x}: " + ", ".join(
        f"bit {b} ({w})" for b, w in bits.items()) + " set", ev


def _ctrl_bits(name: str, offset: int, bits: dict[int, str]) -> Rule:
    return lambda f: _need_bits(ID_CTRL, name.upper(), offset, f["id_ctrl"][name], bits)


# --- PWR (10.3 Power Levels) ------------------------------------------------------------


def _states(f: dict) -> tuple[list[dict], Evidence]:
    psds = f["id_ctrl"]["psds"]
    return psds, Evidence(ID_CTRL, "Power State Descriptors (bytes 2048+32n; NPSS byte 263)",
                          [(p["state"], p["watts"], "non-operational" if p["non_operational"]
                            else "operational") for p in psds])


@rule(V27, "PWR-1", 9901)
def pwr_1(f):
    psds, ev = _states(f)
    current = f["feature_02h"]
    in_use = current & 0x1F
    evs = (ev, Evidence(FEAT_02 + " -s 0 (current)", "Dword 0 bits 4:0 (PS)", in_use))
    empty = [p["state"] for p in psds if p["mp"] == 0]
    if empty:
        return FAIL, f"power state(s) {empty} give no Maximum Power", evs
    if in_use >= len(psds):
        return FAIL, f"the state in use, {in_use}, is not in the table ({len(psds)})", evs
    return PASS, (f"Get Features 02h answered (state {in_use} in use, "
                  f"{'non-' if psds[in_use]['non_operational'] else ''}operational); "
                  f"{len(psds)} descriptor(s), each with a Maximum Power"), evs


@rule(V27, "PWR-4", 9911)
def pwr_4(f):
    psds, ev = _states(f)
    rated = f.get("rated_watts")
    if rated is None:
        return NOT_CHECKED, ("the drive's rated power envelope is not known to the run "
                             "(its datasheet or the DSSD power state descriptors of log C4h)"),\
            (ev,)
    over = [(p["state"], p["watts"]) for p in psds if p["watts"] > rated]
    evs = (ev, Evidence("rated power envelope", "", rated))
    if over:
        return FAIL, f"state(s) above the rated {rated} W: {over}", evs
    return PASS, f"no state above the rated {rated} W", evs


@rule(V27, "PWR-5", 9914)
def pwr_5(f):
    caps = f["feature_02h_capabilities"]
    ev = (Evidence(FEAT_02 + " -s 3 (supported capabilities)", "Dword 0 bit 0 (saveable)",
                   f"0x{caps:x}"),)
    if not caps & 1:
        return FAIL, "Power Management is not saveable (capabilities bit 0 cleared)", ev
    return PASS, "Power Management is saveable", ev


@rule(V27, "PWR-8", 9925)
def pwr_8(f):
    psds, ev = _states(f)
    seen: dict[int, list[int]] = {}
    for p in psds:
        seen.setdefault((p["mp"], p["flags"] & 1), []).append(p["state"])
    same = [s for s in seen.values() if len(s) > 1]
    if same:
        return FAIL, f"states with the same Maximum Power: {same}", (ev,)
    return PASS, f"{len(psds)} state(s), no two with the same Maximum Power", (ev,)


@rule(V27, "PWR-9", 9928)
def pwr_9(f):
    ctratt, ev = id_ctrl_field(f, "ctratt", "CTRATT (byte 96) bit 1 (NOPSPM)")
    if _bit(ctratt, 1):
        return FAIL, "Non-Operational Power State Permissive Mode supported (bit 1 set)", (ev,)
    return PASS, "CTRATT bit 1 (NOPSPM) cleared", (ev,)


# PWR-3 (Maximum Average Power measured as PCM-1 says) is judged from the run's power
# readings: pts.stored.power_rules
for _rid, _line, _why in (
        ("PWR-6", 9918, "idle power needs a power meter"),
        ("PWR-7", 9922, "the PCIe Slot Power Limit against measured power: a power meter")):
    rule(V27, _rid, _line)(lambda f, why=_why: (NOT_CHECKED, why, ()))


# --- NVMe-CFG (4.3), NVMe-AD (4.4), NVMe-IO (4.5), NVMe-OPT (4.6) ------------------------


@rule(V27, "NVMe-CFG-2", 266)
def cfg_2(f):
    mdts, ev = id_ctrl_field(f, "mdts", "MDTS (byte 77), units of CAP.MPSMIN (4 KiB: "
                             "NVMe-CFG-16)", as_hex=False)
    if mdts == 0:
        return PASS, "MDTS 0: no limit", (ev,)
    size = 4096 << mdts
    return (PASS if size >= 256 << 10 else FAIL), f"MDTS {mdts}: {size >> 10} KiB", (ev,)


def _nibble(name: str, offset: int, want: int) -> Rule:
    def check(f):
        v = f["id_ctrl"][name]
        ev = (Evidence(ID_CTRL, f"{name.upper()} (byte {offset}) bits 7:4", f"0x{v:02x}"),)
        return (PASS if v >> 4 == want else FAIL), f"{name.upper()} bits 7:4 = {v >> 4}", ev
    return check


rule(V27, "NVMe-CFG-14", 304)(_nibble("sqes", 512, 6))
rule(V27, "NVMe-CFG-15", 307)(_nibble("cqes", 513, 4))


@rule(V27, "NVMe-CFG-7", 274)
def cfg_7(f):
    eui = f["id_ns"]["eui64"]
    ev = (Evidence(ID_NS, "EUI64 (bytes 127:120)", eui),)
    if int(eui, 16) == 0:
        return FAIL, "the namespace's EUI64 is zero", ev
    return PASS, "a non-zero EUI64 (the run reads the default namespace only)", ev


@rule(V27, "NVMe-CFG-8", 282)
def cfg_8(f):
    nguid, nsfeat = f["id_ns"]["nguid"], f["id_ns"]["nsfeat"]
    ev = (Evidence(ID_NS, "NGUID (bytes 119:104)", nguid),
          Evidence(ID_NS, "NSFEAT (byte 24) bit 3 (UIDREUSE)", f"0x{nsfeat:x}"))
    gaps = [why for bad, why in ((int(nguid, 16) == 0, "NGUID is zero"),
                                 (not _bit(nsfeat, 3), "UIDREUSE (NSFEAT bit 3) cleared"))
            if bad]
    return (FAIL if gaps else PASS), "; ".join(gaps) or "non-zero NGUID, never reused", ev


@rule(V27, "NVMe-CFG-18", 315)
def cfg_18(f):
    elpe, ev = id_ctrl_field(f, "elpe", "ELPE (byte 262), zero-based", as_hex=False)
    return (PASS if elpe + 1 >= 256 else FAIL), f"{elpe + 1} Error Log Page Entries", (ev,)


@rule(V27, "NVMe-CFG-19", 317)
def cfg_19(f):
    c = f["id_ctrl"]
    ev = (Evidence(ID_CTRL, "HMPRE (bytes 275:272), HMMIN (bytes 279:276)",
                   (c["hmpre"], c["hmmin"])),)
    ok = c["hmpre"] == 0 and c["hmmin"] == 0
    return (PASS if ok else FAIL), f"HMPRE {c['hmpre']}, HMMIN {c['hmmin']}", ev


# Mandatory admin / I/O commands of an I/O controller (NVMe Base 2.0, "Admin Command Set"
# and the NVM Command Set's I/O commands): by opcode, from log 05h's CSUPP bits
MANDATORY_ADMIN = {0x00: "Delete I/O SQ", 0x01: "Create I/O SQ", 0x02: "Get Log Page",
                   0x04: "Delete I/O CQ", 0x05: "Create I/O CQ", 0x06: "Identify",
                   0x08: "Abort", 0x09: "Set Features", 0x0A: "Get Features",
                   0x0C: "Asynchronous Event Request"}
MANDATORY_IO = {0x00: "Flush", 0x01: "Write", 0x02: "Read"}


def _opcodes(kind: str, mandatory: dict[int, str]) -> Rule:
    def check(f):
        have = set(f["effects"][kind])
        missing = [f"{op:02X}h {name}" for op, name in mandatory.items() if op not in have]
        ev = (Evidence(EFFECTS, f"{'ACS' if kind == 'admin' else 'IOCS'} entries, bit 0 "
                       "(CSUPP)", sorted(have)),)
        if missing:
            return FAIL, "not supported: " + ", ".join(missing), ev
        return PASS, f"all {len(mandatory)} mandatory opcodes supported", ev
    return check


rule(V27, "NVMe-AD-1", 336)(_opcodes("admin", MANDATORY_ADMIN))
rule(V27, "NVMe-IO-1", 588)(_opcodes("io", MANDATORY_IO))
rule(V27, "NVMe-AD-3", 346)(_ctrl_bits("oacs", 256, {3: "Namespace Management"}))
rule(V27, "NVMe-AD-4", 347)(_ctrl_bits("oacs", 256, {3: "Namespace Attachment"}))
rule(V27, "NVMe-AD-6", 353)(_ctrl_bits("oacs", 256, {6: "NVMe-MI Send and Receive"}))
rule(V27, "NVMe-AD-12", 385)(_ctrl_bits("oacs", 256, {4: "Device Self-test"}))
rule(V27, "NVMe-AD-14", 388)(_ctrl_bits("oacs", 256, {10: "Command and Feature Lockdown"}))
rule(V27, "NVMe-AD-10", 381)(_ctrl_bits("ctratt", 96, {9: "UUID List"}))
rule(V27, "NVMe-AD-7", 358)(_ctrl_bits("sanicap", 328, {0: "Crypto Erase", 1: "Block Erase",
                                                       2: "Overwrite"}))
rule(V27, "NVMe-IO-2", 590)(_ctrl_bits("oncs", 520, {2: "Dataset Management"}))
rule(V27, "NVMe-IO-4", 603)(_ctrl_bits("oncs", 520, {3: "Write Zeroes"}))
rule(V27, "NVMe-IO-8", 638)(_ctrl_bits("oncs", 520, {0: "Compare"}))
rule(V27, "NVMe-IO-9", 639)(_ctrl_bits("fuses", 522, {0: "Compare and Write"}))
rule(V27, "NVMe-IO-16", 658)(_ctrl_bits("sgls", 536, {16: "SGL Bit Bucket descriptor"}))
rule(V27, "NVMe-IO-18", 663)(_ctrl_bits("sgls", 536, {19: "MSDS"}))
rule(V27, "NVMe-OPT-2", 670)(_ctrl_bits("oncs", 520, {6: "Timestamp feature"}))
rule(V27, "NVMe-OPT-8", 696)(_ctrl_bits("lpa", 261, {3: "Telemetry Log Notices"}))
rule(V27, "NVMe-OPT-9", 700)(_ctrl_bits("oaes", 92, {8: "Namespace Attribute Notices"}))
rule(V27, "NVMe-OPT-10", 704)(_ctrl_bits("oaes", 92, {9: "Firmware Activation Notices"}))


@rule(V27, "NVMe-AD-5", 349)
def ad_5(f):
    verdict, why, ev = _need_bits(ID_CTRL, "OACS", 256, f["id_ctrl"]["oacs"],
                                  {1: "Format NVM"})
    fna = f["id_ctrl"]["fna"]
    ev += (Evidence(ID_CTRL, "FNA (byte 524) bit 2 (cryptographic erase, SES 010b)",
                    f"0x{fna:x}"),)
    if verdict == PASS and not _bit(fna, 2):
        return FAIL, why + "; FNA bit 2 cleared: no cryptographic erase (SES 010b)", ev
    return verdict, why, ev


@rule(V27, "NVMe-AD-17", 397)
def ad_17(f):
    v, ev = id_ctrl_field(f, "sanicap", "SANICAP (byte 328) bits 31:30 (NODMMAS)")
    return (PASS if v >> 30 == 1 else FAIL), f"NODMMAS {v >> 30:02b}b", (ev,)


@rule(V27, "NVMe-AD-18", 400)
def ad_18(f):
    v, ev = id_ctrl_field(f, "sanicap", "SANICAP (byte 328) bit 29 (NDI)")
    return (FAIL if _bit(v, 29) else PASS), f"NDI {_bit(v, 29)}", (ev,)


@rule(V27, "NVMe-AD-23", 420)
def ad_23(f):
    v, ev = id_ctrl_field(f, "fna", "FNA (byte 524) bits 1:0")
    return (FAIL if v & 3 else PASS), f"FNA bits 1:0 = {v & 3:02b}b", (ev,)


@rule(V27, "NVMe-AD-24", 423)
def ad_24(f):
    v, ev = id_ctrl_field(f, "aerl", "AERL (byte 259)", as_hex=False)
    return (PASS if v >= 3 else FAIL), f"AERL {v}", (ev,)


@rule(V27, "NVMe-AD-2", 341)
def ad_2(f):
    ns = f["id_ns"]
    ev = (Evidence(ID_NS, "FPI (byte 32) bit 7", f"0x{ns['fpi']:x}"),
          Evidence(ID_NS, "NSFEAT (byte 24) bit 4 (OPTPERF)", f"0x{ns['nsfeat']:x}"))
    gaps = [why for ok, why in ((_bit(ns["fpi"], 7), "FPI bit 7 (format progress) cleared"),
                                (_bit(ns["nsfeat"], 4), "NSFEAT bit 4 (OPTPERF) cleared"))
            if not ok]
    if gaps:
        return FAIL, "; ".join(gaps), ev
    return PASS, "Format Progress Indicator supported and OPTPERF set", ev


@rule(V27, "NVMe-AD-28", 439)
def ad_28(f):
    v = f["id_ns"]["nsfeat"]
    ev = (Evidence(ID_NS, "NSFEAT (byte 24) bit 2 (DAE)", f"0x{v:x}"),)
    return (FAIL if _bit(v, 2) else PASS), f"DAE {_bit(v, 2)}", ev


@rule(V27, "NVMe-IO-3", 596)
def io_3(f):
    v, ev = id_ctrl_field(f, "vwc", "VWC (byte 525) bit 0 (present)")
    if _bit(v, 0):
        return FAIL, ("a volatile write cache is present (VWC bit 0 set): disabling it with "
                      "Set Features 06h would not fail as the requirement says"), (ev,)
    return PASS, "no volatile write cache (VWC bit 0 cleared)", (ev,)


@rule(V27, "NVMe-IO-17", 660)
def io_17(f):
    v, ev = id_ctrl_field(f, "sgls", "SGLS (byte 536) bits 1:0")
    return (PASS if v & 3 in (1, 2) else FAIL), f"SGLS bits 1:0 = {v & 3:02b}b", (ev,)


@rule(V27, "NVMe-IO-15", 657)
def io_15(f):
    v, ev = id_ctrl_field(f, "sgls", "SGLS (byte 536) bits 1:0")
    return (PASS if v & 3 else FAIL), f"SGLs {'supported' if v & 3 else 'not supported'}", \
        (ev,)


@rule(V27, "NVMe-OPT-7", 693)
def opt_7(f):
    ns = f["id_ns"]
    ev = (Evidence(ID_NS, "NSFEAT (byte 24) bit 4, NPWG (bytes 65:64), zero-based",
                   (f"0x{ns['nsfeat']:x}", ns["npwg"])),)
    if not _bit(ns["nsfeat"], 4):
        return FAIL, "NSFEAT bit 4 cleared: NPWG is not reported", ev
    size = (ns["npwg"] + 1) * ns["lbafs"][ns["in_use"]]["bytes"]
    return PASS, f"NPWG reported: {size} bytes (whether it is the IU: the vendor's)", ev


@rule(V27, "NVMe-OPT-16", 715)
def opt_16(f):
    c = f["id_ctrl"]
    ev = (Evidence(ID_CTRL, "ONCS (byte 520) bit 8 (Copy), OCFS (byte 534) bit 0",
                   (f"0x{c['oncs']:x}", f"0x{c['ocfs']:x}")),)
    ok = _bit(c["oncs"], 8) and _bit(c["ocfs"], 0)
    return (PASS if ok else FAIL), f"Copy {_bit(c['oncs'], 8)}, format 0 {_bit(c['ocfs'], 0)}", ev


@rule(V27, "NVMe-OPT-17", 718)
def opt_17(f):
    awupf, npwg = f["id_ctrl"]["awupf"], f["id_ns"]["npwg"]
    ev = (Evidence(ID_CTRL, "AWUPF (bytes 529:528), zero-based", awupf),
          Evidence(ID_NS, "NPWG (bytes 65:64), zero-based", npwg))
    return (PASS if awupf >= npwg else FAIL), f"AWUPF {awupf + 1} >= NPWG {npwg + 1} blocks"\
        if awupf >= npwg else f"AWUPF {awupf + 1} < NPWG {npwg + 1} blocks", ev
