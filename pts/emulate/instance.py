"""An emulated SSD instance: its record (what `start` created, kept in its state directory's
state.json, see lifecycle.py), the identity it reports (model, serial, firmware) and the
error the emulator raises. pts.emulate.lifecycle starts, finds and tears down instances."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields

import pts

MODEL = "snia-pts emulated SSD"


class EmulateError(RuntimeError):
    """The emulator cannot do what was asked; the message says why and what to do."""


@dataclass(frozen=True)
class Instance:
    serial: str
    device: str | None          # /dev/loopN, None while starting
    mount: str
    image: str                  # <mount>/disk.img, the loop device's backing file
    backing: str                # sparse file holding the data
    pid: int | None             # FUSE daemon
    pid_start: int | None
    owner_pid: int | None       # None: lives until `stop`
    owner_start: int | None
    profile: str
    size: int
    state_dir: str
    created: float
    status: str                 # "starting" | "running"

    @property
    def identity(self) -> dict:
        return identity_of(self.serial)

    @property
    def stats_path(self) -> str:
        return os.path.join(self.mount, "stats")

    def as_dict(self) -> dict:
        return dict(asdict(self), identity=self.identity)

    @classmethod
    def from_dict(cls, data: dict) -> Instance:
        """Inverse of as_dict (also reads `start`'s JSON); derived keys are ignored."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def identity_of(serial: str) -> dict:
    return {"model": MODEL, "serial": serial, "firmware": pts.__version__}
