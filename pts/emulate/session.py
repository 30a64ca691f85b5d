"""`--device emulated[:SIZE[:PROFILE]]`: an emulated SSD (pts.emulate) made for one pytest
session, stopped when the session ends (and reaped by the next start if the session is
killed). Its identity in reports is the emulator's, and the run is always declared as a
run on a model."""

from __future__ import annotations

import dataclasses

import pytest

from pts.device.identity import BlockDevice, DeviceError, Identity, resolve

DEFAULT_SIZE = "256M"
DEFAULT_PROFILE = "default"
INSTANCE = pytest.StashKey[object]()


class EmulatedDeviceError(DeviceError):
    """The emulated SSD could not be started; the message says why."""


def is_emulated(option: str) -> bool:
    return option == "emulated" or option.startswith("emulated:")


def parse(option: str) -> tuple[str, str]:
    parts = option.split(":")
    if len(parts) > 3 or any(p == "" for p in parts[1:]):
        raise EmulatedDeviceError(f"--device {option}: write emulated, emulated:SIZE or "
                                  "emulated:SIZE:PROFILE, e.g. emulated:256M:default")
    size = parts[1] if len(parts) > 1 else DEFAULT_SIZE
    profile = parts[2] if len(parts) > 2 else DEFAULT_PROFILE
    return size, profile


def start_for_session(config: pytest.Config, option: str) -> BlockDevice:
    size, profile = parse(option)
    from pts import emulate  # imported only here: it needs mfusepy and fuse3

    try:
        inst = emulate.start(size, profile=profile)
    except (ValueError, emulate.EmulateError, OSError) as exc:
        raise EmulatedDeviceError(f"--device {option}: cannot start the emulated SSD: {exc}") \
            from None
    config.stash[INSTANCE] = inst
    dev = resolve(inst.device)
    ident = inst.identity
    return dataclasses.replace(
        dev, given=option, transport="emulated (loop device over the FUSE FTL model)",
        emulated=True, profile=profile,
        identity=Identity(ident["model"], ident["serial"], ident["firmware"],
                                     f"snia-pts emulator ({inst.state_dir})"))


def stop_for_session(config: pytest.Config) -> None:
    inst = config.stash.get(INSTANCE, None)
    if inst is None:
        return
    from pts import emulate

    del config.stash[INSTANCE]
    emulate.stop(inst.device)


# FTL counters kept in the ledger for emulated runs (cumulative since the emulator started).
COUNTERS = ("host_writes", "nand_writes", "relocations", "gc_runs", "erases", "trims",
            "valid_pages", "free_blocks", "page_size")


def counters(dev: BlockDevice) -> dict | None:
    """The emulator's counters for `dev`, or None for a real device (or if unreadable)."""
    if not dev.emulated:
        return None
    from pts import emulate

    try:
        stats = emulate.read_stats(dev.path)
    except (OSError, ValueError, emulate.EmulateError):
        return None
    return {k: stats.get(k) for k in COUNTERS}
