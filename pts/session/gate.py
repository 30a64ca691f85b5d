"""The checks of a several-device session, for EVERY device before anything is written to
any of them: the same as a single-device run makes at start-up (resolution, capacity, the
safety gate, the lock), collected per device so that the refusal names every reason."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pts.device import safety
from pts.device.identity import BlockDevice, DeviceError, resolve
from pts.device.lock import DeviceLock
from pts.emulate import session as emulated

INSPECT_THREADS = 8          # devices inspected at once (remote ones wait on ssh)


@dataclass
class Checked:
    """One device given on the command line and what its checks found."""

    given: str
    label: str
    device: BlockDevice | None = None      # None: emulated (made by its child) or refused
    lock: DeviceLock | None = None
    refused: str | None = None             # why the device is refused (None: accepted)

    @property
    def accepted(self) -> bool:
        return self.refused is None


def check_all(givens: Sequence[str], labels: Sequence[str], *, destructive: bool,
              check_capacity: Callable[[BlockDevice], None],
              resolver: Callable[[str], BlockDevice] = resolve) -> list[Checked]:
    """Every device checked (none stops the others' checks). Writable devices are locked
    (the locks go to the children); nothing is written to any device. `resolver`: path or
    ssh:// URL -> device (pts.cli.remote.resolve_given).

    The devices are inspected at the same time (up to INSPECT_THREADS): a drive on another
    host takes ~25 ssh commands of ~0.3 s each, so six of them one after the other kept a
    session from starting for 45 s. Duplicates and locks are then settled in order."""
    out = [Checked(g, lab) for g, lab in zip(givens, labels, strict=True)]
    real = [c for c in out if not emulated.is_emulated(c.given)]
    with ThreadPoolExecutor(max_workers=INSPECT_THREADS) as pool:
        found = list(pool.map(lambda c: _inspect(c.given, resolver, check_capacity,
                                                 destructive), real))
    seen: dict[tuple, str] = {}
    for c, dev in zip(real, found, strict=True):
        try:
            if isinstance(dev, DeviceError):
                raise dev
            key = (dev.remote and (dev.remote.host, dev.remote.ssh_port), dev.devno)
            if key in seen:
                raise DeviceError(f"{c.given} is the same device as {seen[key]} "
                                  f"({dev.path}), given twice: give each device once")
            seen[key] = c.given
            if destructive:
                c.lock = DeviceLock(dev).acquire()
            c.device = dev
        except DeviceError as exc:
            c.refused = str(exc)
    for c in out:
        if emulated.is_emulated(c.given):
            try:                      # made for the session by its child run: safe by design
                emulated.parse(c.given)
            except emulated.EmulatedDeviceError as exc:
                c.refused = str(exc)
    return out


def _inspect(given: str, resolver: Callable[[str], BlockDevice],
             check_capacity: Callable[[BlockDevice], None],
             destructive: bool) -> BlockDevice | DeviceError:
    """Resolution, capacity and the safety gate of one device: the device, or why not."""
    try:
        dev = resolver(given)
        check_capacity(dev)
        if destructive:
            safety.check_writable(dev, destructive=True)
        return dev
    except DeviceError as exc:
        return exc


def release_all(checked: Sequence[Checked]) -> None:
    for c in checked:
        if c.lock is not None:
            c.lock.release()
            c.lock = None


def refusal(checked: Sequence[Checked]) -> str:
    """The usage error of a session with refused devices."""
    bad = [c for c in checked if not c.accepted]
    return ("refusing the whole session: " + "; ".join(f"[{c.label}] {c.refused}" for c in bad)
            + f". Nothing was written to any of the {len(checked)} devices. Fix or leave out "
            "the refused device(s), or add --skip-refused-devices to test the others.")
