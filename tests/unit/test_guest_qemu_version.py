"""The QEMU test guest needs QEMU >= 10.0 (tests/support/guest/qemu.py): an older QEMU fails the
guest's set-up naming the fix, never a silent skip; and the NVMe drive QEMU 10 is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.guest.image import GuestSetupError, Image
from tests.support.guest.qemu import QEMU_MIN, qemu_argv, qemu_version, require_qemu_version


def fake_qemu(tmp_path: Path, line: str) -> str:
    """An executable that prints `line` as `qemu-system-x86_64 --version` does."""
    path = tmp_path / "qemu-system-x86_64"
    path.write_text(f"#!/bin/sh\necho '{line}'\necho 'Copyright (c) 2003-2025'\n")
    path.chmod(0o755)
    return str(path)


def test_debian_12_qemu_7_2_is_refused_naming_backports(tmp_path):
    binary = fake_qemu(tmp_path, "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)")
    assert qemu_version(binary)[:2] == (7, 2)
    with pytest.raises(GuestSetupError) as err:
        require_qemu_version(binary)
    text = str(err.value)
    assert "needs QEMU >= 10.0" in text and "7.2.22" in text
    assert "qemu-system-x86/bookworm-backports" in text and ".ci/backports.sh" in text


def test_backports_qemu_10_is_accepted(tmp_path):
    binary = fake_qemu(tmp_path,
                       "QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)")
    assert qemu_version(binary)[:2] == (10, 0) >= QEMU_MIN
    require_qemu_version(binary)


def test_no_version_in_the_output_is_a_setup_error(tmp_path):
    with pytest.raises(GuestSetupError, match="printed no version"):
        require_qemu_version(fake_qemu(tmp_path, "something else"))


def test_the_nvme_drive_is_an_ocp_controller_in_a_subsystem(tmp_path):
    """ocp=on (log C0h) on a controller in an nvme-subsys (Endurance Group 1, log 09h) with
    FDP (reclaim units of 1 TiB: no FDP write amplification), the namespace its own nvme-ns
    device on that controller, placing through handles 0-2."""
    image = Image(tmp_path / "vmlinuz", tmp_path / "initrd", "6.1.0-0-amd64")
    argv = qemu_argv(image, tmp_path, tmp_path / "disk.img", "PTSQEMU0001")
    devices = [argv[i + 1] for i, a in enumerate(argv) if a == "-device"]
    assert devices[:3] == [
        "nvme-subsys,id=nvmsubsys0,fdp=on,fdp.runs=1T,fdp.nrg=1,fdp.nruh=4",
        "nvme,serial=PTSQEMU0001,ocp=on,subsys=nvmsubsys0,id=nvmectrl0",
        "nvme-ns,drive=nvm,nsid=1,bus=nvmectrl0,fdp.ruhs=0;1;2"]
    assert argv[argv.index("-cpu") + 1] == "Nehalem-v1"
