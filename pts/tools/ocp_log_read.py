"""Reading an OCP log page's bytes from a drive: `nvme get-log CTRL --log-id=0xC0
--log-len=512 --raw-binary` (nvme-cli's generic Get Log Page, in Debian 12's nvme-cli 2.3 as
in later ones; `nvme get-log --help`), the bytes kept in a file of the run, then decoded by
the spec's table (pts.tools.ocp_log_decode). No dependence on which fields nvme-cli's OCP
plugin knows how to print.

A page whose size depends on its version (C3h: 512 bytes up to version 4, 4096 from 5) is
read at its smallest size first; if its version says it is larger, it is read again whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from pts.config.ocp_log_layout import LogPage
from pts.tools import commands
from pts.tools.nvme_json import NvmeError
from pts.tools.ocp_log_decode import DecodedLog, decode

PACKAGE = "nvme-cli"
# nvme-cli's words when the drive has no such log (libnvme's status strings) or the raw
# status: Invalid Log Page is 1/09h, Invalid Field in Command 0/02h (QEMU 10 refuses the
# logs it does not emulate so: tests/data/qemu-10, "ret = 16386" = 4002h)
REFUSALS = ("Invalid Log Page", "INVALID_LOG_PAGE", "Invalid Field in Command",
            "INVALID_FIELD")
REFUSAL_STATUS = (0x002, 0x109)


class OcpLogNotSupported(NvmeError):
    """The drive refused the log page (it has no such log)."""


_STATUS = re.compile(r"ret = (\d+)|\(0x([0-9a-fA-F]+)\)")   # "ret = 16386", "...(0x4109)"


def _refused(text: str) -> bool:
    if any(r in text for r in REFUSALS):
        return True
    for m in _STATUS.finditer(text):
        value = int(m[1]) if m[1] else int(m[2], 16)
        if value & 0x7FF in REFUSAL_STATUS:
            return True
    return False


def get_log_argv(ctrl: str, log_id: int, length: int, uuid_index: int | None = None
                 ) -> list[str]:
    argv = ["nvme", "get-log", ctrl, f"--log-id=0x{log_id:02x}", f"--log-len={length}",
            "--raw-binary"]
    if uuid_index is not None:          # OCP's UUID in the drive's UUID list (UUID-x)
        argv.append(f"--uuid-index={uuid_index}")
    return argv


def read_bytes(ctrl: str, log_id: int, length: int, out: Path, *,
               log_file: Path | None = None, run: Callable | None = None,
               uuid_index: int | None = None, timeout: float = 60) -> bytes:
    """The `length` bytes of log `log_id`, kept in `out`. Raises OcpLogNotSupported when
    the drive refuses the log, NvmeError when nvme-cli fails otherwise or prints fewer
    bytes than asked."""
    if run is None:
        commands.require("nvme", PACKAGE)
        run = commands.run
    argv = get_log_argv(ctrl, log_id, length, uuid_index)
    try:
        result = run(argv, log_file=log_file, timeout=timeout, stdout_path=out, check=False)
    except commands.ToolFailed as exc:       # a timeout
        raise NvmeError(str(exc)) from None
    said = f"{result.stderr} {result.stdout}".strip()
    if result.returncode != 0:
        if _refused(said):
            raise OcpLogNotSupported(
                f"log {log_id:02X}h: {ctrl} does not support it ({' '.join(argv)}: "
                f"{said[-200:]})")
        raise NvmeError(f"log {log_id:02X}h: {' '.join(argv)} exited with status "
                        f"{result.returncode}: {said[-200:]}")
    data = out.read_bytes()
    if len(data) < length:
        raise NvmeError(f"log {log_id:02X}h: {' '.join(argv)} gave {len(data)} of {length} "
                        f"bytes (short read); the bytes it gave are in {out}")
    return data[:length]


def read_log(ctrl: str, page: LogPage, out: Path, *, log_file: Path | None = None,
             run: Callable | None = None, uuid_index: int | None = None) -> DecodedLog:
    """Log `page` of the controller `ctrl` (/dev/nvmeX), read as bytes into `out` and
    decoded (an OcpLogError from the decoder names what the bytes are not)."""
    first = min(page.sizes.values())
    data = read_bytes(ctrl, page.log_id, first, out, log_file=log_file, run=run,
                      uuid_index=uuid_index)
    version = int.from_bytes(data[page.version_at:page.version_at + 2], "little")
    known = [v for v in page.versions if v <= version]
    whole = page.sizes[known[-1]] if known else first
    if whole > first:
        data = read_bytes(ctrl, page.log_id, whole, out, log_file=log_file, run=run,
                          uuid_index=uuid_index)
    return decode(page, data)
