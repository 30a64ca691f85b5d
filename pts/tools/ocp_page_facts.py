"""The OCP vendor log pages besides C0h, read once at a test's start as bytes (issue 49 §1, §3):
C1h Error Recovery, C3h Latency Monitor, C4h Device Capabilities, C5h Unsupported
Requirements (`nvme get-log CTRL --log-id=0xC3 --log-len=N --raw-binary`, read-only), each
decoded by the spec's tables (pts.config.ocp_log_pages, pts.tools.ocp_log_decode) into
facts.values["ocp_pages"]["C3h"], the bytes kept in the run's host-facts folder. The rules
that judge them: pts.stored.ocp_page_rules.

A page's fact is what the drive did: answered (`exit` 0, `file`, `bytes`, its header's
`version` and `guid`, `decoded` the fields, `reserved` the count of non-zero bytes in each
reserved range of its version; `error` when the bytes are not the page: another GUID, too
short), refused as not supported (`refused`: nvme-cli's status text, e.g. "Invalid Field in
Command (0x4002)", and `exit`, QEMU 10's answer to every OCP page but C0h), or failed
otherwise (`error`, `exit`). Log C1h's answer is also given as facts.values["logs"]["C1h"]
(read_log_support's form), read once here.

C2h is obsolete in v2.7 (line 1158); C6h (variable-length) is read by
pts.tools.ocp_component_facts; C7h, C9h and CAh are not read as pages: see the report of
issue 49.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from pts.config.ocp_log_layout import RESERVED, STRUCT, LogField, LogPage
from pts.config.ocp_log_pages import PAGES
from pts.tools import commands
from pts.tools.nvme_json import NvmeError
from pts.tools.ocp_log_decode import OcpLogError, as_record, decode, guid_text
from pts.tools.ocp_log_read import PACKAGE, OcpLogNotSupported, get_log_argv, read_log

KEY = "ocp_pages"
READ = (0xC1, 0xC3, 0xC4, 0xC5)
# nvme-cli 2.3's words: "NVMe status: Invalid Field in Command: A reserved coded value ...
# (0x4002)" (tests/data/qemu-10/nvme-get-log-c3h_refused.stderr.txt)
_STATUS = re.compile(r"NVMe status: ([^:(]+?)\s*[:(].*?\((0x[0-9a-fA-F]+)\)")


def status_text(said: str) -> str:
    """nvme-cli's status as the rules cite it: "Invalid Field in Command (0x4002)" (the
    last line as said when it is not in that form)."""
    m = _STATUS.search(said)
    if m:
        return f"{m[1].strip()} ({m[2]})"
    lines = [x.strip() for x in said.strip().splitlines() if x.strip()]
    return lines[-1][:200] if lines else "(nothing said)"


def _reserved_ranges(page: LogPage, read_as: int) -> list[tuple[str, int, int]]:
    """(name, first byte, one past the last) of each reserved range of version `read_as`,
    reserved bytes inside a STRUCT's entries included."""
    out = []

    def walk(f: LogField, base: int, label: str) -> None:
        if f.kind == RESERVED:
            out.append((label, base + f.offset, base + f.end))
        elif f.kind == STRUCT:
            for i in range(f.count):
                for e in f.entry:
                    walk(e, base + f.offset + i * f.size, f"{label}[{i}].{e.name}")
    for f in page.fields:
        if read_as in f.versions:
            walk(f, 0, f.name)
    return out


def page_fact(page: LogPage, data: bytes) -> dict:
    """What the bytes `data` of `page` give: the header, the decoded fields (or the decoder's
    `error`) and the non-zero byte count of each reserved range."""
    out = {"bytes": len(data), "version": None, "guid": None, "decoded": None,
           "error": None, "reserved": {}}
    if len(data) >= page.guid_at + 16:
        out["version"] = int.from_bytes(data[page.version_at:page.version_at + 2], "little")
        out["guid"] = guid_text(data[page.guid_at:page.guid_at + 16])
    try:
        decoded = decode(page, data)
    except OcpLogError as exc:
        out["error"] = str(exc)
        return out
    out["decoded"] = as_record(decoded)
    out["reserved"] = {name: sum(1 for b in data[a:z] if b)
                       for name, a, z in _reserved_ranges(page, decoded.read_as)}
    return out


def _keeping(run: Callable, seen: list) -> Callable:
    """`run`, each result also appended to `seen` (the exit status and words of a refusal,
    which OcpLogNotSupported does not carry)."""
    def call(argv, **kw):
        seen.append(result := run(argv, **kw))
        return result
    return call


def read_pages(ctrl: str, folder: Path, facts, *, run: Callable | None = None,
               log_file: Path | None = None, logs: tuple[int, ...] = READ) -> None:
    """Each page of `logs` into facts.values["ocp_pages"] (see the module docstring); bytes
    in `folder`/log-c3h.bin. One read a page (C3h twice when its version is 4096 bytes)."""
    if run is None:
        commands.require("nvme", PACKAGE)
    base = run or commands.run
    out = facts.values.setdefault(KEY, {})
    for log_id in logs:
        page, name = PAGES[log_id], f"{log_id:02X}h"
        seen: list = []
        call = _keeping(base, seen)
        path = folder / f"log-{log_id:02x}h.bin"
        argv = " ".join(get_log_argv(ctrl, log_id, min(page.sizes.values())))
        try:
            read_log(ctrl, page, path, run=call, log_file=log_file)
            fact = {"command": argv, "exit": 0, "file": path.name}
        except OcpLogNotSupported:
            said = f"{seen[-1].stderr} {seen[-1].stdout}".strip()
            out[name] = {"command": argv, "exit": seen[-1].returncode,
                         "refused": status_text(said), "said": said[-200:]}
            continue
        except OcpLogError:
            fact = {"command": argv, "exit": 0, "file": path.name}
        except NvmeError as exc:
            out[name] = {"command": argv, "exit": seen[-1].returncode if seen else None,
                         "error": str(exc)}
            continue
        fact.update(page_fact(page, path.read_bytes()))
        out[name] = fact
    if 0xC1 in logs:          # the form pts.stored.log_rules / telemetry_rules read logs in
        c1 = out["C1h"]
        facts.values.setdefault("logs", {})["C1h"] = (
            {"bytes": c1["bytes"], "file": c1["file"]} if "bytes" in c1 else
            {"refused": f"{c1['command']}: exit status {c1['exit']}: "
                        f"{c1.get('said') or c1.get('error')}"})
