"""The QEMU guest's outputs as the guest tests read them (tests/support/guest/qemu.py): a
guest that wrote rc but no dmesg.txt (init.sh writes rc first, then the kernel log, then
powers off) has no kernel log to check, and checking it fails instead of passing on "".
The guest itself boots only in the slow tier (tests/e2e/test_qemu_*.py)."""

from __future__ import annotations

import pytest

from tests.support.guest import GuestError, qemu


def outputs(folder, dmesg: str | None):
    (folder / "rc").write_text("0\n")
    (folder / "guest.log").write_text("suite passed\n")
    if dmesg is not None:
        (folder / "dmesg.txt").write_text(dmesg)
    return qemu.collect(folder, 12.5, 3.0)


def test_the_kernel_log_is_what_the_guest_wrote(tmp_path):
    result = outputs(tmp_path, "[    1.0] nvme nvme0: 2/0/0 default/read/poll queues\n")
    assert (result.returncode, result.log_text, result.seconds, result.ready_seconds) == (
        0, "suite passed\n", 12.5, 3.0)
    assert result.kernel_log() == "[    1.0] nvme nvme0: 2/0/0 default/read/poll queues\n"


def test_a_missing_dmesg_txt_is_a_failure_not_an_empty_log(tmp_path):
    result = outputs(tmp_path, None)
    assert result.dmesg_text is None
    with pytest.raises(GuestError, match="the guest wrote no dmesg.txt"):
        result.kernel_log()


def test_an_empty_dmesg_txt_is_an_empty_log(tmp_path):
    assert outputs(tmp_path, "").kernel_log() == ""
