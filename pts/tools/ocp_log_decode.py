"""An OCP log page's bytes -> its fields, by the spec's own tables (pts.config.ocp_log_c0,
ocp_log_pages): pure, no device. A field the page's version does not carry is not given
(None, and named in `not_given`), never 0: nvme-cli prints fields a page's version lacks, as
zeros, and some nvme-cli versions print fields a page has not at all (2.3 prints no Power
State Change Count); the bytes say what the drive gave.

`encode` is the inverse (fields -> bytes), for tests: a page nvme-cli printed as JSON
(`from_nvme_cli_json`, either key style) is turned into the bytes the drive sent and read
back.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from pts.config.ocp_log_layout import ASCII, BYTES, RESERVED, STRUCT, UINT, UUID, LogField, LogPage
from pts.tools.nvme_json import uint128


class OcpLogError(ValueError):
    """Bytes that are not the log page asked for (short, another GUID, unknown version)."""


@dataclass(frozen=True)
class DecodedLog:
    """One OCP log page read from its bytes. `fields`: every table field by name, None where
    the page's version does not carry it (those names: `not_given`). `read_as`: the table
    version the fields were read by (the page's own, or the newest the table knows when the
    page is newer: its later fields are then unread, see `newer`)."""

    log_id: int
    version: int
    guid: str
    spec: str                  # the specification version the page's version belongs to
    fields: dict
    not_given: tuple[str, ...]
    all_ones: tuple[str, ...]  # every byte FFh: the spec's "not supported" where it has one
    read_as: int

    @property
    def newer(self) -> bool:
        return self.read_as != self.version

    def get(self, name: str):
        return self.fields[name]


def _le(data: bytes, offset: int, size: int) -> int:
    return int.from_bytes(data[offset:offset + size], "little")


def guid_text(raw: bytes) -> str:
    """A GUID field as the spec writes it (the 128-bit little-endian value, 32 hex digits)."""
    return f"0x{int.from_bytes(raw, 'little'):032x}"


def _element(f: LogField, raw: bytes):
    if f.kind == UINT:
        return int.from_bytes(raw, "little")
    if f.kind == ASCII:
        return raw.split(b"\0", 1)[0].decode("ascii", "replace")
    if f.kind == UUID:
        return str(uuid.UUID(bytes=raw))
    return bytes(raw)                      # BYTES


def read_field(f: LogField, data: bytes, base: int = 0):
    """One field's value out of `data` (its offset from `base`): a value, a list (count >
    1) or a list of dicts (STRUCT)."""
    def one(i: int):
        start = base + f.offset + i * f.size
        if f.kind == STRUCT:
            return {e.name: read_field(e, data, start) for e in f.entry if e.kind != RESERVED}
        return _element(f, data[start:start + f.size])
    return one(0) if f.count == 1 else [one(i) for i in range(f.count)]


def _all_ones(f: LogField, data: bytes) -> bool:
    raw = data[f.offset:f.end]
    return f.kind in (UINT, BYTES) and raw == b"\xff" * len(raw)


def decode(page: LogPage, data: bytes, *, every_field: bool = False) -> DecodedLog:
    """`data` (what `nvme get-log --raw-binary` printed) read as `page`. every_field: read
    each table field whatever the page's version (to compare with what nvme-cli printed)."""
    if len(data) < page.guid_at + 16:
        raise OcpLogError(f"log {page.log_id:02X}h: {len(data)} bytes, too short to hold its "
                          f"version and GUID (bytes {page.version_at}-{page.guid_at + 15})")
    guid = guid_text(data[page.guid_at:page.guid_at + 16])
    if guid != page.guid:
        raise OcpLogError(f"log {page.log_id:02X}h: GUID {guid}, not the {page.name} log's "
                          f"{page.guid}: not an OCP {page.name} page (a vendor's own log "
                          "under the same identifier?)")
    version = _le(data, page.version_at, 2)
    known = page.versions
    if version < known[0]:
        raise OcpLogError(f"log {page.log_id:02X}h: log page version {version}, older than "
                          f"the versions the table knows ({', '.join(map(str, known))})")
    read_as = max(v for v in known if v <= version)   # a later page: read as the last known
    size = page.sizes[read_as]
    if len(data) < size:
        raise OcpLogError(f"log {page.log_id:02X}h version {version}: {len(data)} bytes, the "
                          f"page is {size}: read it with --log-len={size}")
    fields, not_given, ones = {}, [], []
    for f in page.fields:
        if f.kind == RESERVED:
            continue
        if read_as not in f.versions and not every_field:
            fields[f.name] = None
            not_given.append(f.name)
            continue
        fields[f.name] = read_field(f, data)
        if _all_ones(f, data):
            ones.append(f.name)
    return DecodedLog(page.log_id, version, guid, page.spec_of[read_as], fields,
                      tuple(not_given), tuple(ones), read_as)


def _put(f: LogField, value, out: bytearray, base: int = 0) -> None:
    values = [value] if f.count == 1 else list(value)
    if len(values) != f.count:
        raise ValueError(f"{f.name}: {len(values)} values for {f.count} elements")
    for i, v in enumerate(values):
        start = base + f.offset + i * f.size
        if f.kind == STRUCT:
            for e in f.entry:
                if e.name in v:
                    _put(e, v[e.name], out, start)
            continue
        if f.kind == UINT:
            raw = int(v).to_bytes(f.size, "little")
        elif f.kind == ASCII:
            raw = str(v).encode("ascii").ljust(f.size, b"\0")
        elif f.kind == UUID:
            raw = uuid.UUID(str(v)).bytes
        else:
            raw = bytes(v)
        if len(raw) != f.size:
            raise ValueError(f"{f.name}: {len(raw)} bytes for a {f.size}-byte field")
        out[start:start + f.size] = raw


def encode(page: LogPage, values: dict, version: int, size: int | None = None) -> bytes:
    """The bytes of a `page` of `version` holding `values` (field name -> value; the rest
    zero), its version and GUID in place: the inverse of decode."""
    known = page.versions
    out = bytearray(size or page.sizes[max([v for v in known if v <= version] or known[:1])])
    by_name = {f.name: f for f in page.fields}
    for name, value in values.items():
        _put(by_name[name], value, out)
    out[page.version_at:page.version_at + 2] = version.to_bytes(2, "little")
    out[page.guid_at:page.guid_at + 16] = int(page.guid, 16).to_bytes(16, "little")
    return bytes(out)


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def json_key(f: LogField, doc: dict) -> str | None:
    """The key `f` stands under in an nvme-cli JSON page (style 1, style 2 or an older
    spelling; matched case- and punctuation-blind), or None when nvme-cli did not print it."""
    flat = {_key(k): k for k in doc}
    for k in (*f.keys, *f.old_keys):
        if k is not None and _key(k) in flat:
            return flat[_key(k)]
    return None


def from_nvme_cli_json(page: LogPage, doc: dict) -> tuple[int, str, dict]:
    """(version, GUID, {field name: value}) of the fields an nvme-cli JSON page printed, in
    the table's types: 128-bit counters from {hi, lo} or decimal strings."""
    version = guid = None
    for key, value in doc.items():
        if _key(key) == "logpageversion":
            version = int(value)
        elif _key(key) == "logpageguid":
            guid = str(value).lower()
    if version is None or guid is None:
        raise OcpLogError(f"log {page.log_id:02X}h JSON: no log page version or GUID")
    values = {}
    for f in page.fields:
        key = json_key(f, doc)
        if key is None:
            continue
        raw = doc[key]
        values[f.name] = uint128(raw) if f.kind == UINT else raw
    return version, guid, values


def cross_check(page: LogPage, decoded: DecodedLog, doc: dict) -> list[str]:
    """Where nvme-cli's JSON of the same page and the bytes both give a value and the two
    differ: "name: bytes X, nvme-cli Y" (the version and GUID included). Empty: they agree.
    A field the page's version does not carry is not compared (nvme-cli prints those too)."""
    version, guid, printed = from_nvme_cli_json(page, doc)
    out = [f"log page version: bytes {decoded.version}, nvme-cli {version}"
           ] if version != decoded.version else []
    value = int(decoded.guid, 16)      # nvme-cli prints "0x%llx%llx": high, low half unpadded
    if guid not in (decoded.guid, f"0x{value >> 64:x}{value & (1 << 64) - 1:x}"):
        out.append(f"log page GUID: bytes {decoded.guid}, nvme-cli {guid}")
    for name, value in printed.items():
        mine = decoded.fields.get(name)
        if mine is not None and mine != value:
            out.append(f"{name}: bytes {mine!r}, nvme-cli {value!r}")
    return out


def as_record(decoded: DecodedLog) -> dict:
    """The decoded page as a run record can keep it (JSON: bytes fields as hex text)."""
    def plain(v):
        if isinstance(v, bytes):
            return v.hex()
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v
    return {"log_id": decoded.log_id, "version": decoded.version, "guid": decoded.guid,
            "spec": decoded.spec, "read_as": decoded.read_as,
            "fields": {k: plain(v) for k, v in decoded.fields.items()},
            "not_given": list(decoded.not_given), "all_ones": list(decoded.all_ones)}
