"""Fixtures and requirement checks of the project's own tests.

Tests that need root or a tool say so with @pytest.mark.needs("root", "fio", ...). An unmet
requirement skips with a readable reason on a developer machine, but FAILS under
--require-all or CI=true: CI installs everything, so a skip there would hide a broken set-up.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

# tool -> the Debian package that ships it; README command 2 installs every one of these
# packages (tests/test_review_defects_install.py checks it, and the mapping against dpkg)
TOOLS = {"fio": "fio", "blkdiscard": "util-linux", "blockdev": "util-linux",
         "partx": "util-linux", "mkswap": "util-linux", "losetup": "mount", "mount": "mount",
         "umount": "mount", "swapon": "mount", "swapoff": "mount",
         "pdftotext": "poppler-utils", "mkfs.ext4": "e2fsprogs", "fusermount3": "fuse3",
         "sfdisk": "fdisk", "pgrep": "procps", "pkill": "procps",
         "qemu-system-x86_64": "qemu-system-x86", "busybox": "busybox-static", "cpio": "cpio",
         "depmod": "kmod"}


def pytest_addoption(parser):
    parser.addoption("--require-all", action="store_true",
                     help="fail (instead of skip) tests whose requirements (root, tools) are "
                          "unmet; implied by CI=true")


def pytest_configure(config):
    config.addinivalue_line("markers", "qemu: boots a QEMU (TCG) guest with an emulated NVMe "
                            "drive (tests/guest); minutes, not seconds")


def _unmet(requirement: str) -> str | None:
    if requirement == "root":
        return None if os.geteuid() == 0 else "needs root (loop devices, raw block I/O)"
    if requirement == "root-on-block-device":
        st = os.stat("/")
        ok = os.path.exists(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
        return None if ok else "needs / on a block device (not overlay/tmpfs)"
    if requirement == "/dev/fuse":
        return None if os.path.exists("/dev/fuse") else "needs /dev/fuse (FUSE in the kernel)"
    if requirement == "mfusepy":
        try:
            import mfusepy  # noqa: F401
        except (ImportError, OSError) as exc:      # OSError: libfuse3 missing
            return f"needs mfusepy with libfuse3 (pip install -e '.[emulate]'): {exc}"
        return None
    if requirement in TOOLS:
        return None if shutil.which(requirement) else \
            f"needs {requirement} (apt-get install {TOOLS[requirement]})"
    raise ValueError(f"unknown requirement {requirement!r}")


def pytest_runtest_setup(item):
    reasons = [r for m in item.iter_markers("needs") for a in m.args if (r := _unmet(a))]
    if not reasons:
        return
    strict = item.config.getoption("--require-all") or os.environ.get("CI") in ("true", "1")
    message = "; ".join(reasons)
    if strict:
        pytest.fail(f"requirement not met (and --require-all/CI set): {message}")
    pytest.skip(message)


@pytest.fixture
def make_loop(tmp_path):
    """Factory: a loop device over a sparse file in /dev/shm. Detaches only what it made."""
    made: list[tuple[str, Path]] = []

    def make(size: int = 64 << 20, sector: int = 512, partitioned: bool = False) -> str:
        backing = Path("/dev/shm") / f"pts-test-{uuid.uuid4().hex[:8]}.img"
        with open(backing, "wb") as fh:
            fh.truncate(size)
        argv = ["losetup", "--find", "--show", "--direct-io=on", f"--sector-size={sector}"]
        if partitioned:
            argv.append("--partscan")
        try:
            dev = subprocess.run(argv + [str(backing)], check=True, capture_output=True,
                                 text=True).stdout.strip()
        except BaseException:
            backing.unlink()
            raise
        made.append((dev, backing))
        return dev

    yield make
    for dev, backing in made:
        detach_if_ours(dev, backing)
        backing.unlink(missing_ok=True)


def detach_if_ours(dev: str, backing: Path) -> None:
    """Detach `dev` only while it is still bound to our backing file: a test may have
    detached it already, and the kernel may have given the number to someone else since."""
    bound = Path("/sys/block") / Path(dev).name / "loop" / "backing_file"
    try:
        if bound.read_text().strip() != str(backing):
            return
    except OSError:
        return
    with contextlib.suppress(subprocess.CalledProcessError):
        subprocess.run(["losetup", "-d", dev], check=True, capture_output=True)


REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
