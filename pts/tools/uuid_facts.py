"""What a host reads of an NVMe drive for the OCP namespace management and UUID rows (v2.7
4.4.1 NSM-*, 4.4.3 UUID-*; pts.stored.namespace_uuid_rules), read-only, once at a test's
start (pts.tools.host_read.read_all, after Identify and log 05h):

- the UUID List (Identify CNS 17h: `nvme admin-passthru CTRL --opcode=0x06 --cdw10=0x17
  --data-len=4096 --read --raw-binary`), read only when Identify Controller's CTRATT bit 9
  (UUID List) is set, as NVMe asks no other drive to answer it: facts.values["uuid_list"] =
  {"command", "entries": [{"index", "association", "uuid"}]} or {"command", "exit",
  "said"} or {"not_read": why};
- the Namespace Granularity List (CNS 16h, the same command with --cdw10=0x16), only when
  CTRATT bit 7 (Namespace Granularity) is set: facts.values["ns_granularity"] = {"command",
  "descriptors": NUMD + 1, "attributes"} or as above;
- which admin commands support UUID selection: bit 19 (USS) of each Commands Supported and
  Effects entry of the log 05h bytes read_identity kept (no second read):
  facts.values["uuid_selection"] = {"admin": [opcodes], "file"}.

Layouts: the NVM Express Base Specification 2.0's UUID List (bytes 31:0 reserved, then 127
entries of 32 bytes: byte 0 bits 1:0 Identifier Association, bytes 31:16 the UUID; index =
entry + 1; the v2.7 text's UUID-1 gives bytes 63:48 for entry 0's UUID [L530]), Namespace
Granularity List (byte 31 NUMD, 0's based), Commands Supported and Effects (bit 19 USS), as
libnvme @03297d8b names them (nvme_id_uuid_list, nvme_id_ns_granularity_list,
NVME_CMD_EFFECTS_UUID_SEL).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

from pts.tools import commands

UUID_LIST_BIT, GRANULARITY_BIT, USS_BIT = 9, 7, 19
ENTRY, FIRST, ENTRIES = 32, 32, 127


def uuid_entries(data: bytes) -> list[dict]:
    """The UUID List's entries up to the first all-zero one (the list's end)."""
    out = []
    for i in range(ENTRIES):
        at = FIRST + i * ENTRY
        raw = data[at + 16:at + 32]
        if len(raw) < 16 or not any(data[at:at + 32]):
            break
        out.append({"index": i + 1, "association": data[at] & 3,
                    "uuid": str(uuid.UUID(bytes=bytes(raw)))})
    return out


def uuid_selection(data: bytes) -> list[int]:
    """Admin opcodes whose Commands Supported and Effects entry has USS (bit 19) set."""
    return [op for op in range(256)
            if int.from_bytes(data[op * 4:op * 4 + 4], "little") >> USS_BIT & 1]


def _identify(ctrl: str, cns: int, out: Path, run: Callable, log_file: Path | None):
    argv = ["nvme", "admin-passthru", ctrl, "--opcode=0x06", f"--cdw10=0x{cns:02x}",
            "--data-len=4096", "--read", "--raw-binary"]
    result = run(argv, log_file=log_file, timeout=60, stdout_path=out, check=False)
    if result.returncode != 0:
        return None, {"command": " ".join(argv), "exit": result.returncode,
                      "said": (result.stderr or result.stdout or "").strip()[-200:]}
    return out.read_bytes(), {"command": " ".join(argv), "file": out.name}


def read_uuid_facts(ctrl: str, folder: Path, facts, *, run: Callable | None = None,
                    log_file: Path | None = None) -> None:
    """The three facts of the module docstring into `facts` (nvme_facts.Facts)."""
    ctrl_id = facts.values.get("id_ctrl")
    if ctrl_id is None:
        return
    if run is None:
        commands.require("nvme", "nvme-cli")
        run = commands.run
    if "effects" in facts.files:
        data = (folder / facts.files["effects"]).read_bytes()
        facts.values["uuid_selection"] = {"admin": uuid_selection(data),
                                          "file": facts.files["effects"]}
    for key, bit, cns, name in (("uuid_list", UUID_LIST_BIT, 0x17, "UUID List"),
                                ("ns_granularity", GRANULARITY_BIT, 0x16,
                                 "Namespace Granularity")):
        if not ctrl_id["ctratt"] >> bit & 1:
            facts.values[key] = {"not_read": f"CTRATT bit {bit} ({name}) cleared"}
            continue
        data, fact = _identify(ctrl, cns, folder / f"identify-cns{cns:02x}h.bin", run,
                               log_file)
        if data is not None and key == "uuid_list":
            fact["entries"] = uuid_entries(data)
        elif data is not None:
            fact.update(attributes=int.from_bytes(data[0:4], "little"),
                        descriptors=data[31] + 1)
        facts.values[key] = fact
