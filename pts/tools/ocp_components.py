"""The Component Descriptors of an OCP Hardware Component log page (C6h) out of its bytes, and
back (for tests): pure, no device. The layout: pts.config.ocp_log_c6. Descriptors are walked
from byte 64 (HWCOMP-7), each one's size from its own Date/Lot Size and Additional
Information Size (COMPD-1, -2, in Dwords), the next starting where it ends (HWCOMP-9), up to
the Hardware Component Log Size in the header (HWCOMP-8). What does not fit is said in
`problem`, the descriptors before it kept.
"""

from __future__ import annotations

from pts.config.ocp_log_c6 import C6, DESCRIPTOR, FIXED, HEADER


def log_size(data: bytes) -> int:
    """The header's Hardware Component Log Size (bytes 47:32)."""
    f = C6.field("hardware_component_log_size")
    return int.from_bytes(data[f.offset:f.end], "little")


def walk(data: bytes, size: int) -> tuple[list[dict], str | None]:
    """(the descriptors between byte 64 and `size`, what broke the walk or None). Each
    descriptor: its fields, `at` and `end` (one past its last byte), `date_lot_code` and
    `additional_information` as hex text."""
    out: list[dict] = []
    at = HEADER
    if size < HEADER:
        return out, f"Hardware Component Log Size {size}: smaller than the 64-byte header"
    if size > len(data):
        return out, f"Hardware Component Log Size {size}: only {len(data)} bytes read"
    while at < size:
        if at + FIXED > size:
            return out, f"{size - at} bytes at {at}: too few for a descriptor's 44 fixed " \
                "bytes before the log size"
        d = {n: int.from_bytes(data[at + o:at + o + s], "little") for n, o, s, _ in DESCRIPTOR}
        lot, info = d["date_lot_size"] * 4, d["additional_information_size"] * 4
        end = at + FIXED + lot + info
        if end > size:
            return out, f"descriptor at byte {at} (identifier {d['component_identifier']:04X}h)" \
                f" ends at {end - 1}, past the log's last byte {size - 1}"
        d.update(at=at, end=end, date_lot_code=data[at + FIXED:at + FIXED + lot].hex(),
                 additional_information=data[at + FIXED + lot:end].hex())
        out.append(d)
        at = end
    return out, None


def encode(components: list[dict], size: int | None = None, version: int = 2) -> bytes:
    """The bytes of a C6h page holding `components` (each: component_identifier, the other
    fixed fields (0 if left out), `date_lot_code` and `additional_information` as bytes,
    their sizes from their lengths unless given), the log size `size` (default: the bytes)."""
    body = bytearray()
    for c in components:
        lot, info = c.get("date_lot_code", b""), c.get("additional_information", b"")
        lot, info = lot.ljust(-(-len(lot) // 4) * 4, b"\0"), info.ljust(-(-len(info) // 4) * 4,
                                                                        b"\0")
        values = {"date_lot_size": len(lot) // 4, "additional_information_size":
                  len(info) // 4, **{k: v for k, v in c.items() if isinstance(v, int)}}
        fixed = bytearray(FIXED)
        for n, o, s, _ in DESCRIPTOR:
            fixed[o:o + s] = values.get(n, 0).to_bytes(s, "little")
        body += fixed + lot + info
    total = HEADER + len(body)
    head = bytearray(HEADER)
    head[0:2] = version.to_bytes(2, "little")
    head[16:32] = int(C6.guid, 16).to_bytes(16, "little")
    f = C6.field("hardware_component_log_size")
    head[f.offset:f.end] = (total if size is None else size).to_bytes(16, "little")
    return bytes(head + body)
