"""Fixtures shared by e2e test modules: the real browser (issue 22: Debian's headless
Chromium through chromium-driver, by path, nothing downloaded) and the one boot of the QEMU
guest (tests/support/qemu_guest.py) that test_qemu_e2e.py and test_qemu_sata_sas.py read."""

from __future__ import annotations

import pytest

from tests.support.screens import chromium


@pytest.fixture(scope="module")
def browser():
    driver = chromium()
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="session")
def guest(tmp_path_factory):
    """The QEMU guest booted once per session, its script run (tests/support/qemu_guest.py)."""
    from pts import emulate
    from tests.support import qemu_guest
    from tests.support.guest import default_cache_dir, ensure_image
    image = ensure_image(default_cache_dir())
    inst = emulate.start(qemu_guest.DISK_BYTES, profile="default")
    try:
        yield qemu_guest.boot(image, inst, tmp_path_factory.mktemp("guest-share"))
    finally:
        emulate.stop(inst.device)
