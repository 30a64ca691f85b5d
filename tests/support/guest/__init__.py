"""A small Linux guest under QEMU 10 (TCG) with an emulated NVMe drive, for project tests.

The NVMe drive is QEMU's controller with the OCP extensions in an NVMe subsystem (qemu.py):
nvme-cli reads its SMART log, Endurance Group log 09h and OCP C0h log; what QEMU 10.0's
controller lacks (Sanitize, telemetry, C3h) is in docs/development.md, "The QEMU test guest".

The guest boots Debian's own kernel with a busybox initramfs, mounts the host's root
filesystem read-only over 9p and chroots into it, so a guest script can run the project's
venv and code (and the host's nvme-cli and fio) against /dev/nvme0n1:

    image = ensure_image(default_cache_dir())
    with backing_file(256 << 20) as disk:
        result = run_guest(image, "nvme list", share_dir, disk, serial="pts0001", timeout=120)

See image.py (kernel + initramfs, cached) and qemu.py (one boot, one script).
"""

from tests.support.guest.image import GuestSetupError, Image, default_cache_dir, ensure_image
from tests.support.guest.qemu import (
    GuestBootError,
    GuestError,
    GuestResult,
    GuestTimeout,
    backing_file,
    make_backing,
    run_guest,
)

__all__ = ["GuestBootError", "GuestError", "GuestResult", "GuestSetupError", "GuestTimeout",
           "Image", "backing_file", "default_cache_dir", "ensure_image", "make_backing",
           "run_guest"]
