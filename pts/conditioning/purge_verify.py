"""Checking that a purge erased something: before it, write marker blocks at offsets spread
over the device; after it, none may be readable. This does not depend on what the device
returns for erased blocks (zeros, ones or anything else), only on the old data being gone.
O_DIRECT, so the page cache cannot answer for the device."""

from __future__ import annotations

import mmap
import os
import secrets

from pts.device.identity import BlockDevice

COUNT = 16
ALIGN = 4096          # O_DIRECT alignment that suits 512 B and 4 KiB sector devices


def _offsets(dev: BlockDevice) -> list[int]:
    block = max(ALIGN, dev.logical_sector)
    last = dev.capacity_bytes // block - 1
    return sorted({(last * i // (COUNT - 1)) * block for i in range(COUNT)})


def _block(dev: BlockDevice) -> mmap.mmap:
    return mmap.mmap(-1, max(ALIGN, dev.logical_sector))   # page-aligned, as O_DIRECT needs


def write_markers(dev: BlockDevice) -> dict[int, bytes]:
    """Marker text per offset; each block is a random token repeated, written durably."""
    markers = {}
    buf = _block(dev)
    fd = os.open(dev.path, os.O_WRONLY | os.O_DIRECT | os.O_SYNC)
    try:
        for offset in _offsets(dev):
            token = f"snia-pts purge marker {secrets.token_hex(8)} @{offset};".encode()
            buf.seek(0)
            buf.write((token * (len(buf) // len(token) + 1))[:len(buf)])
            os.pwrite(fd, buf, offset)
            markers[offset] = token
    finally:
        os.close(fd)
        buf.close()
    return markers


def surviving_markers(dev: BlockDevice, markers: dict[int, bytes]) -> list[int]:
    """Offsets whose marker can still be read back."""
    found = []
    buf = _block(dev)
    fd = os.open(dev.path, os.O_RDONLY | os.O_DIRECT)
    try:
        for offset, token in markers.items():
            os.preadv(fd, [buf], offset)
            if token in buf[:]:
                found.append(offset)
    finally:
        os.close(fd)
        buf.close()
    return found
