"""The OCP namespace management and UUID rows a host judges read-only (v2.7 4.4.1 NSM-1, NSM-6;
4.4.3 UUID-1, UUID-2, UUID-4), from Identify Controller, the UUID List, the Namespace
Granularity List and the Commands Supported and Effects log as pts.tools.uuid_facts read them
at a test's start. Rules are added to pts.stored.host_rules.RULES; pts.stored.host_judge
applies them. UUID-1 replaces pts.stored.identify_rules' (which saw only CTRATT bit 9): that
one still judges a run recorded before the UUID List was read.

Left NOT CHECKED (ocp_id_classes' reason): NSM-2, NSM-3, NSM-5 (the factory's default sector
size and the device profile are not facts a read gives), UUID-3, UUID-5 (a Get Features / Get
Log Page sent with the DSSD UUID's index), UUID-6 (vendor events in the Persistent Event log).
"""

from __future__ import annotations

from pts.stored import identify_rules
from pts.stored.host_rules import EFFECTS, FAIL, ID_CTRL, PASS, V27, Evidence, rule

# UUID-1 [L530]: C194D55BE0944794A21D29998F56BE6Fh, big endian (bytes 48..63 of the list)
DSSD_UUID = "c194d55b-e094-4794-a21d-29998f56be6f"
GET_LOG, SET_FEATURES, GET_FEATURES = 0x02, 0x09, 0x0A
_EARLIER_UUID_1 = identify_rules.uuid_1


def _ctratt(f: dict, bit: int, name: str) -> tuple[int, Evidence]:
    v = f["id_ctrl"]["ctratt"]
    return v >> bit & 1, Evidence(ID_CTRL, f"CTRATT (bytes 99:96) bit {bit} ({name})",
                                  f"0x{v:x}")


@rule(V27, "NSM-1", 468)
def nsm_1(f):
    v = f["id_ctrl"]["oacs"]
    ev = (Evidence(ID_CTRL, "OACS (bytes 257:256) bit 3 (Namespace Management)", f"0x{v:x}"),)
    if not v >> 3 & 1:
        return FAIL, "Namespace Management and Attachment not supported (OACS bit 3 cleared)", ev
    return PASS, "Namespace Management and Attachment supported (OACS bit 3 set); the " \
        "commands are not sent (they would change the drive's namespaces)", ev


@rule(V27, "NSM-6", 489)
def nsm_6(f):
    on, ev = _ctratt(f, 7, "Namespace Granularity")
    g = f["ns_granularity"]
    if not on:
        return FAIL, "no Namespace Granularity List (CTRATT bit 7 cleared): no descriptor " \
            "reported", (ev,)
    src = Evidence(g["command"], "Namespace Granularity List byte 31 (NUMD, 0's based)",
                   g.get("descriptors", g.get("said")))
    if "descriptors" not in g:
        return FAIL, f"Identify CNS 16h refused (exit {g['exit']}): {g['said']}", (ev, src)
    return PASS, f"{g['descriptors']} Namespace Granularity Descriptor(s)", (ev, src)


@rule(V27, "UUID-1", 530)
def uuid_1(f):
    if "uuid_list" not in f:            # a run recorded before the UUID List was read
        return _EARLIER_UUID_1(f)
    on, ev = _ctratt(f, 9, "UUID List")
    u = f["uuid_list"]
    if not on:
        return FAIL, "no UUID List (CTRATT bit 9 cleared): the DSSD UUID is not listed", (ev,)
    if "entries" not in u:
        return FAIL, f"Identify CNS 17h (UUID List) refused (exit {u['exit']}): {u['said']}", \
            (ev, Evidence(u["command"], "UUID List", u["said"]))
    found = [e for e in u["entries"] if e["uuid"] == DSSD_UUID]
    src = Evidence(u["command"], "UUID List entries (index, association, UUID)",
                   [(e["index"], e["association"], e["uuid"]) for e in u["entries"][:8]])
    if not found:
        return FAIL, f"the DSSD UUID {DSSD_UUID} is not among the list's " \
            f"{len(u['entries'])} entries", (ev, src)
    e = found[0]
    if e["association"]:
        return FAIL, f"the DSSD UUID at index {e['index']} with Identifier Association " \
            f"{e['association']:02b}b (00b asked)", (ev, src)
    return PASS, f"the DSSD UUID at index {e['index']}, Identifier Association 00b", (ev, src)


def _uss(opcodes: tuple[int, ...], what: str):
    def check(f):
        s = f["uuid_selection"]
        have = [op for op in opcodes if op in s["admin"]]
        ev = (Evidence(EFFECTS, ", ".join(f"bytes {op * 4 + 3}:{op * 4} (opcode {op:02X}h) "
                                          "bit 19 (USS)" for op in opcodes),
                       [f"{op:02X}h" for op in have]),)
        missing = [f"{op:02X}h" for op in opcodes if op not in have]
        if missing:
            return FAIL, f"UUID selection not supported by {what} (USS cleared for opcode " \
                f"{', '.join(missing)})", ev
        return PASS, f"{what}: UUID selection supported (USS set); a command sent with the " \
            "DSSD UUID's index is not (UUID-3, UUID-5)", ev
    return check


rule(V27, "UUID-2", 541)(_uss((SET_FEATURES, GET_FEATURES), "Set Features and Get Features"))
rule(V27, "UUID-4", 552)(_uss((GET_LOG,), "Get Log Page"))
