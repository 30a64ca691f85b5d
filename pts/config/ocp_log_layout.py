"""What the OCP Datacenter NVMe SSD Specification's log page tables are made of, kept as data:
each vendor log page (C0h, C1h, ...) is a table of fields, each with its byte address, its
size, its requirement ID and the log page versions that carry it (the spec's section 4.8
tables; the pages themselves: ocp_log_c0.py and ocp_log_pages.py). Read by
pts.tools.ocp_log_decode, which turns a page's bytes into these fields.

Requirement IDs are keyed by specification version (`ids`: (("2.0", "SMART-1"), ("2.7",
"SMART-1"))): IDs were renumbered between versions, so an ID alone names nothing. Only the
versions whose text was read are given (2.0: the r21 PDF; 2.7: the Markdown; both named in
pts.config.ocp_requirements.SPEC_TEXT); no 2.5 or 2.6 text was at hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# How a field's bytes read (all multi-byte numbers are little-endian, NVMe's byte order)
UINT = "uint"        # an unsigned integer of `size` bytes (16 bytes: a 128-bit counter)
ASCII = "ascii"      # text, NVMe's ASCII string rules (space padded; NULs dropped here)
UUID = "uuid"        # 16 bytes in the NVM Express Base Specification's UUID format
BYTES = "bytes"      # kept as bytes: the spec gives the field no single number
STRUCT = "struct"    # `count` entries of `entry` (a nested table, offsets within an entry)
RESERVED = "reserved"


@dataclass(frozen=True)
class LogField:
    """One field of a log page table. `size` is one element's size; `count` > 1 makes the
    field an array of `count` elements back to back (e.g. 4 bucket counters of 4 bytes)."""

    name: str                          # this project's name (snake_case)
    offset: int                        # first byte (the spec's "Byte Address" low end)
    size: int                          # bytes of one element
    ids: tuple[tuple[str, str], ...]   # ((spec version, requirement ID), ...)
    versions: tuple[int, ...]          # the log page versions that carry the field
    kind: str = UINT
    unit: str = ""
    count: int = 1
    entry: tuple[LogField, ...] = ()   # STRUCT: the entry's own fields
    keys: tuple[str | None, str | None] = (None, None)   # nvme-cli JSON: style 1, style 2
    old_keys: tuple[str, ...] = ()    # older nvme-cli spellings of style 1

    @property
    def end(self) -> int:
        """One past the last byte."""
        return self.offset + self.size * self.count

    def req_id(self, spec: str) -> str | None:
        return dict(self.ids).get(spec)


@dataclass(frozen=True)
class LogPage:
    """One OCP log page: its identifier, GUID, where its version and GUID stand, its size
    per log page version and the specification version each page version belongs to."""

    log_id: int
    name: str
    guid: str                          # "0x" + 32 hex digits, as the spec writes it
    sizes: dict[int, int]              # log page version -> page size in bytes
    spec_of: dict[int, str]            # log page version -> the spec version it is from
    version_at: int                    # byte address of Log Page Version (2 bytes)
    guid_at: int                       # byte address of Log Page GUID (16 bytes)
    fields: tuple[LogField, ...] = field(default=())

    @property
    def versions(self) -> tuple[int, ...]:
        return tuple(sorted(self.sizes))

    def field(self, name: str) -> LogField:
        found = [f for f in self.fields if f.name == name]
        if not found:
            raise KeyError(f"log {self.log_id:02X}h has no field {name!r}")
        return found[0]


def since(first: int, last: int) -> tuple[int, ...]:
    """The log page versions first..last."""
    return tuple(range(first, last + 1))
