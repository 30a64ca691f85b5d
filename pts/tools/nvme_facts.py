"""The host-readable facts of an NVMe drive, from bytes: Identify Controller and Namespace, the
Power Management feature (02h), the Commands Supported and Effects log (05h) and the FDP logs
(20h-23h) of an Endurance Group, decoded by the tables of pts.config.nvme_layout (pure), and
read with nvme-cli 2.3's own commands (`nvme id-ctrl -b`, `nvme id-ns -b`, `nvme get-feature
-f 2 -s N`, `nvme get-log --log-id=N --lsi=ENDGID --raw-binary`). The rules that judge them:
pts.stored.host_rules.

What a run keeps (the record, `as_record`): the decoded facts with the path of each file of
bytes beside them, and for each read the drive refused its words ("Invalid Field in Command"
for log 00h on QEMU 10): a refusal is a fact too (the rule says NOT CHECKED or FAIL from it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pts.config import nvme_layout as L
from pts.tools import commands
from pts.tools.nvme_json import NvmeError, uint128
from pts.tools.ocp_log_decode import read_field
from pts.tools.ocp_log_read import OcpLogNotSupported, read_bytes

RECORD_TYPE = "nvme_facts"
LOG_EFFECTS, LOG_FDP_CONFIGS, LOG_RUH_USAGE, LOG_FDP_STATS, LOG_FDP_EVENTS = (
    0x05, 0x20, 0x21, 0x22, 0x23)


class FactsError(ValueError):
    """Bytes that are not the structure asked for (too short, a count past the end)."""


def _need(data: bytes, size: int, what: str) -> None:
    if len(data) < size:
        raise FactsError(f"{what}: {len(data)} bytes, the structure is {size}: read it whole "
                         f"(nvme-cli's --raw-binary / -b output, unmodified)")


def _table(fields, data: bytes, base: int = 0) -> dict:
    return {f.name: read_field(f, data, base) for f in fields}


def power_watts(psd: dict) -> float:
    """A power state's Maximum Power in watts (MXPS, flags bit 0: 0.0001 W units, else 0.01 W)."""
    return psd["mp"] * (0.0001 if psd["flags"] & 1 else 0.01)


def id_ctrl(data: bytes) -> dict:
    """Identify Controller's fields; `psds`: the NPSS + 1 descriptors the drive fills, each
    with `watts` and `non_operational` (flags bit 1, NOPS) beside its raw fields."""
    _need(data, L.ID_SIZE, "Identify Controller")
    out = _table(L.ID_CTRL, data)
    psds = out["psds"][:out["npss"] + 1]
    for i, p in enumerate(psds):
        p.update(state=i, watts=round(power_watts(p), 4), non_operational=bool(p["flags"] & 2))
    out["psds"] = psds
    return out


def id_ns(data: bytes) -> dict:
    """Identify Namespace's fields; `lbafs`: the NLBAF + 1 formats, each with its data size
    in bytes; `in_use`: the format FLBAS names (bits 3:0, and 6:5 above 16 formats)."""
    _need(data, L.ID_SIZE, "Identify Namespace")
    out = _table(L.ID_NS, data)
    out["lbafs"] = [dict(f, bytes=1 << f["lbads"]) for f in out["lbafs"][:out["nlbaf"] + 1]]
    out["in_use"] = (out["flbas"] & 0xF) | ((out["flbas"] >> 5 & 3) << 4)
    for key in ("nguid", "eui64"):
        out[key] = out[key].hex()
    return out


def effects(data: bytes) -> dict:
    """Log 05h: the admin and I/O opcodes whose entry has CSUPP (bit 0) set."""
    _need(data, L.EFFECTS_SIZE, "log 05h (Commands Supported and Effects)")
    t = _table(L.EFFECTS, data)
    return {"admin": [op for op, e in enumerate(t["acs"]) if e & 1],
            "io": [op for op, e in enumerate(t["iocs"]) if e & 1]}


def fdp_configs(data: bytes) -> list[dict]:
    """Log 20h: each FDP configuration descriptor with its handles' types (`ruhts`)."""
    _need(data, L.FDP_CONFIG_HEADER_SIZE, "log 20h (FDP Configurations)")
    head = _table(L.FDP_CONFIG_HEADER, data)
    at, out = L.FDP_CONFIG_HEADER_SIZE, []
    for i in range(head["n"] + 1):           # NUMFDPC is zero-based
        _need(data, at + L.FDP_CONFIG_FIXED, f"log 20h configuration {i}")
        c = _table(L.FDP_CONFIG, data, at)
        end = at + L.FDP_CONFIG_FIXED + L.RUH_DESC_SIZE * c["nruh"]
        _need(data, end, f"log 20h configuration {i}'s {c['nruh']} handles (read more bytes)")
        c.update(index=i, valid=bool(c["fdpa"] & 0x80), vwc=bool(c["fdpa"] & 0x10),
                 rgif=c["fdpa"] & 0xF,
                 ruhts=[data[at + L.FDP_CONFIG_FIXED + L.RUH_DESC_SIZE * h]
                        for h in range(c["nruh"])])
        out.append(c)
        at += c["size"] or end - at
    return out


def ruh_usage(data: bytes) -> list[int]:
    """Log 21h: each reclaim unit handle's attributes (bit 0 host, bit 1 controller specified)."""
    _need(data, L.RUHU_AT, "log 21h (Reclaim Unit Handle Usage)")
    n = _table(L.RUHU_HEADER, data)["nruh"]
    _need(data, L.RUHU_AT + L.RUHU_SIZE * n, f"log 21h's {n} handles")
    return [data[L.RUHU_AT + L.RUHU_SIZE * h] for h in range(n)]


def fdp_stats(data: bytes) -> dict:
    """Log 22h: host bytes with metadata written, media bytes with metadata written, media
    bytes erased (128-bit counters)."""
    _need(data, L.FDP_STATS_SIZE, "log 22h (FDP Statistics)")
    return _table(L.FDP_STATS, data)


def fdp_events(data: bytes) -> list[dict]:
    """Log 23h: its events, each with its type's name and flags named."""
    _need(data, L.FDP_EVENTS_AT, "log 23h (FDP Events)")
    n = int.from_bytes(data[:4], "little")
    if n > L.FDP_EVENTS_MAX:
        raise FactsError(f"log 23h: {n} events, the log holds at most {L.FDP_EVENTS_MAX}")
    _need(data, L.FDP_EVENTS_AT + L.FDP_EVENT_SIZE * n, f"log 23h's {n} events")
    out = []
    for i in range(n):
        e = _table(L.FDP_EVENT, data, L.FDP_EVENTS_AT + L.FDP_EVENT_SIZE * i)
        e["type_specific"] = e["type_specific"].hex()
        e.update(name=L.FDP_EVENT_TYPES.get(e["type"], f"reserved {e['type']:02X}h"),
                 flag_names=[n for b, n in L.FDP_EVENT_FLAGS.items() if e["flags"] >> b & 1])
        out.append(e)
    return out


_VALUE = re.compile(r"value:\s*(?:0x)?([0-9a-fA-F]+)")


def feature_value(text: str) -> int:
    """nvme-cli's `get-feature` line ("... Current value:00000000" or "...:0x00000001")."""
    m = _VALUE.search(text)
    if not m:
        raise FactsError(f"no 'value:' in nvme get-feature's output: {text.strip()[:120]!r}")
    return int(m[1], 16)


def waf(before: dict, after: dict) -> dict:
    """The FDP WAF of a window: media bytes over host bytes written between two readings of
    log 22h (None when the host wrote nothing in it)."""
    host = after["hbmw"] - before["hbmw"]
    media = after["mbmw"] - before["mbmw"]
    if host < 0 or media < 0:
        raise FactsError("log 22h's counters went down between the readings: a reset "
                         "(FDP re-enabled, a format) lies in the window; take a new base reading")
    return {"host_bytes": host, "media_bytes": media,
            "waf": None if host == 0 else media / host}


@dataclass
class Facts:
    """What a run read: decoded facts by name, the file of bytes each came from, and the
    drive's words for what it refused."""

    values: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)
    refused: dict = field(default_factory=dict)

    def as_record(self, moment: str) -> dict:
        return {"type": RECORD_TYPE, "moment": moment, "facts": self.values,
                "files": self.files, "refused": self.refused}


def json_safe(value):
    """`value` as the ledger keeps it: bytes as hex text (json.dumps' `default` too)."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    return value


# log -> (fact name, bytes read first, decoder, LSP); 20h and 21h are read again whole when
# their header says they are longer (20h: its size field; 21h: 8 bytes a handle)
FDP_LOGS = {LOG_FDP_CONFIGS: ("fdp_configs", 512, fdp_configs, None),
            LOG_RUH_USAGE: ("ruh_usage", 512, ruh_usage, None),
            LOG_FDP_STATS: ("fdp_stats", L.FDP_STATS_SIZE, fdp_stats, None),
            LOG_FDP_EVENTS: ("fdp_host_events",
                             L.FDP_EVENTS_AT + L.FDP_EVENT_SIZE * L.FDP_EVENTS_MAX,
                             fdp_events, 1)}


def whole_length(log_id: int, head: bytes) -> int:
    """How many bytes log `log_id` holds, by its header (0: what was read is all of it)."""
    if log_id == LOG_FDP_CONFIGS:
        return int.from_bytes(head[4:8], "little")
    if log_id == LOG_RUH_USAGE:
        return L.RUHU_AT + L.RUHU_SIZE * int.from_bytes(head[:2], "little")
    return 0


def read_fdp(ctrl: str, endgid: int, folder: Path, facts: Facts, tag: str, *,
             run: Callable | None = None, log_file: Path | None = None) -> None:
    """Logs 20h-23h of Endurance Group `endgid` into `facts` (bytes kept in `folder`, one
    file per log and moment `tag`); a log the drive refuses is named in `facts.refused`."""
    if run is None:
        commands.require("nvme", "nvme-cli")
    for log_id, (name, length, decode, lsp) in FDP_LOGS.items():
        out = folder / f"log-{log_id:02x}h_{tag}.bin"
        extra = [f"--lsi={endgid}"] + ([f"--lsp={lsp}"] if lsp is not None else [])
        try:
            data = read_bytes(ctrl, log_id, length, out, run=_with(run, extra),
                              log_file=log_file)
            if (whole := whole_length(log_id, data)) > length:
                data = read_bytes(ctrl, log_id, whole, out, run=_with(run, extra),
                                  log_file=log_file)
        except OcpLogNotSupported as exc:
            facts.refused[name] = str(exc)
            continue
        facts.values[name] = json_safe(decode(data))
        facts.files[name] = out.name


def read_identity(ctrl: str, ns: str, folder: Path, facts: Facts, *,
                  run: Callable | None = None, log_file: Path | None = None) -> None:
    """Identify Controller and Namespace (`-b`: the bytes), Get Features 02h (the state in
    use, SEL 0; its default, SEL 1: META-PERF-12; its capabilities, SEL 3) and log 05h into
    `facts`, bytes kept in `folder`; and Identify Controller sent with a stray NSID
    (`read_stray_nsid`)."""
    if run is None:
        commands.require("nvme", "nvme-cli")
        run = commands.run
    for name, argv, decode in (("id_ctrl", ["nvme", "id-ctrl", ctrl, "-b"], id_ctrl),
                               ("id_ns", ["nvme", "id-ns", ns, "-b"], id_ns)):
        out = folder / f"{name}.bin"
        result = run(argv, log_file=log_file, timeout=60, stdout_path=out, check=False)
        if result.returncode != 0:
            facts.refused[name] = _said(argv, result)
            continue
        facts.values[name] = json_safe(decode(out.read_bytes()))
        facts.files[name] = out.name
    for name, sel in (("feature_02h", 0), ("feature_02h_default", 1),
                      ("feature_02h_capabilities", 3)):
        argv = ["nvme", "get-feature", ctrl, "--feature-id=0x02", f"--sel={sel}"]
        result = run(argv, log_file=log_file, timeout=60, check=False)
        if result.returncode != 0:
            facts.refused[name] = _said(argv, result)
            continue
        facts.values[name] = feature_value(result.stdout)
    read_stray_nsid(ctrl, folder, facts, run=run, log_file=log_file)
    out = folder / "log-05h.bin"
    try:
        facts.values["effects"] = effects(read_bytes(ctrl, LOG_EFFECTS, L.EFFECTS_SIZE, out,
                                                     run=run, log_file=log_file))
        facts.files["effects"] = out.name
    except OcpLogNotSupported as exc:
        facts.refused["effects"] = str(exc)


def read_features(ctrl: str, fids: tuple[int, ...], facts: Facts, *,
                  run: Callable | None = None, log_file: Path | None = None) -> None:
    """Get Features SEL 3 (supported capabilities: bit 0 saveable, bit 1 namespace specific,
    bit 2 changeable) of each feature in `fids`, into facts.values["features"]["0Eh"] =
    {"capabilities": n} or {"refused": the drive's words} (Invalid Field: not supported); of
    a Timestamp feature answered, its current value too ("current": `timestamp`)."""
    if run is None:
        commands.require("nvme", "nvme-cli")
        run = commands.run
    out = facts.values.setdefault("features", {})
    for fid in fids:
        argv = ["nvme", "get-feature", ctrl, f"--feature-id=0x{fid:02x}", "--sel=3"]
        result = run(argv, log_file=log_file, timeout=60, check=False)
        out[f"{fid:02X}h"] = ({"capabilities": feature_value(result.stdout)}
                              if result.returncode == 0 else {"refused": _said(argv, result)})
    if "capabilities" in out.get("0Eh", {}):        # its value too: NVMe-OPT-5's Synch bit
        argv = ["nvme", "get-feature", ctrl, "--feature-id=0x0e", "--sel=0"]
        result = run(argv, log_file=log_file, timeout=60, check=False)
        try:
            out["0Eh"]["current"] = (timestamp(feature_buffer(result.stdout))
                                     if result.returncode == 0
                                     else {"refused": _said(argv, result)})
        except FactsError as exc:               # no data buffer printed: say so, read on
            out["0Eh"]["current"] = {"error": f"{exc} ({result.stdout.strip()[:80]!r})"}


_DUMP = re.compile(r"^[0-9a-f]{4}: ((?:[0-9a-f]{2} ?)+)", re.MULTILINE)


def feature_buffer(text: str) -> bytes:
    """The data buffer nvme-cli's `get-feature` prints as a hex dump ("0000: d8 b4 2f ...")."""
    return bytes.fromhex("".join(m[1] for m in _DUMP.finditer(text)))


def timestamp(data: bytes) -> dict:
    """The Timestamp feature's 8 bytes (NVMe Base 2.0 5.27.1.12): milliseconds (bytes 5:0),
    byte 6 bit 0 Synch, bits 3:1 Timestamp Origin."""
    if len(data) < 8:
        raise FactsError(f"Get Features 0Eh (Timestamp): {len(data)} bytes of data, 8 asked "
                         "(nvme-cli prints them as a hex dump after the value line)")
    return {"milliseconds": int.from_bytes(data[:6], "little"), "synch": data[6] & 1,
            "origin": data[6] >> 1 & 7, "bytes": data[:8].hex()}


def read_stray_nsid(ctrl: str, folder: Path, facts: Facts, *, run: Callable,
                    log_file: Path | None = None) -> None:
    """Identify Controller (CNS 01h, which uses no namespace identifier) sent with NSID 1, as
    NVMe-AD-11 asks a drive to abort: facts.values["identify_stray_nsid"] = {"exit_status",
    "said": nvme-cli's last words}. Read-only; the 4,096 bytes of an answer kept."""
    argv = ["nvme", "admin-passthru", ctrl, "--opcode=0x06", "--namespace-id=1", "--cdw10=1",
            "--data-len=4096", "--read", "--raw-binary"]
    out = folder / "identify-cns01h-nsid1.bin"
    result = run(argv, log_file=log_file, timeout=60, stdout_path=out, check=False)
    facts.values["identify_stray_nsid"] = {
        "exit_status": result.returncode, "command": " ".join(argv),
        "said": (result.stderr or "").strip()[-200:]}


def read_log_support(ctrl: str, log_ids: tuple[int, ...], folder: Path, facts: Facts, *,
                     endgid: int = 1, run: Callable | None = None,
                     log_file: Path | None = None) -> None:
    """Whether the drive answers each log of `log_ids` (its first 512 bytes, kept): into
    facts.values["logs"]["01h"] = {"bytes": 512} or {"refused": the drive's words}. Log 0Dh
    is read with LSP 1 (establish a reporting context), as it must be read first; log 09h
    with the Endurance Group `endgid` in LSI (QEMU 10 refuses it with LSI 0: seen in the
    guest)."""
    if run is None:
        commands.require("nvme", "nvme-cli")
    out = facts.values.setdefault("logs", {})
    for log_id in log_ids:
        path = folder / f"log-{log_id:02x}h_support.bin"
        extra = {0x0D: ["--lsp=1"], 0x09: [f"--lsi={endgid}"]}.get(log_id, [])
        try:
            data = read_bytes(ctrl, log_id, 512, path, run=_with(run, extra),
                              log_file=log_file)
        except OcpLogNotSupported as exc:
            out[f"{log_id:02X}h"] = {"refused": str(exc)}
            continue
        out[f"{log_id:02X}h"] = {"bytes": len(data), "file": path.name}


def _said(argv: list[str], result) -> str:
    return (f"{' '.join(argv)}: exit status {result.returncode}: "
            f"{(result.stderr or result.stdout).strip()[-200:]}")


def _with(run: Callable | None, extra: list[str]) -> Callable:
    """commands.run (or `run`) with `extra` arguments added to the get-log command line."""
    base = run or commands.run

    def call(argv, **kwargs):
        return base(list(argv) + extra, **kwargs)
    return call


def as_int(value) -> int:
    """A counter as nvme-cli prints it (int, decimal string, {hi, lo}) as an int."""
    return value if isinstance(value, int) else uint128(value)


__all__ = ["Facts", "FactsError", "NvmeError", "as_int", "effects", "fdp_configs",
           "fdp_events", "fdp_stats", "feature_value", "id_ctrl", "id_ns", "json_safe",
           "feature_buffer", "power_watts", "read_fdp", "read_features", "read_identity",
           "read_log_support", "read_stray_nsid", "ruh_usage", "timestamp", "waf"]
