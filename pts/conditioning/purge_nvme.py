"""NVMe purge (PTS 2.0.2 §3.2: NVMe Sanitize or Format NVM with Secure Erase Settings).

Chosen from what the controller says it supports (Identify Controller SANICAP, OACS, FNA):
Sanitize block erase > crypto erase > overwrite, else Format with SES=2 (crypto erase,
FNA bit 2) or SES=1 (user data erase). Plain `nvme format` without --ses erases nothing on
many drives, so SES is always given. Fail closed: anything unexpected raises PurgeError.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from pts.conditioning.purge_plan import PurgeError, PurgePlan, PurgeResult
from pts.device.identity import BlockDevice
from pts.tools import nvme

# NVMe Sanitize action codes (SANACT, Sanitize command CDW10 bits 2:0).
SANACT = {"block": 2, "overwrite": 3, "crypto": 4}
SANITIZE_NAMES = {"block": "block erase", "crypto": "crypto erase", "overwrite": "overwrite"}
FORMAT_TIMEOUT_S = 4 * 3600        # a Format of a large drive with SES=1 can take hours
SANITIZE_TIMEOUT_S = 24 * 3600     # sanitize runs in the background; never wait for ever
POLL_S = 5.0


def other_namespaces(dev: BlockDevice, sys_class: Path = Path("/sys/class/nvme")) -> list[str]:
    """Namespaces on the same controller besides `dev` (Sanitize always, and Format with
    FNA bit 0, erase them too). The controller's node holds `nvme0n2` for a namespace, or,
    under native NVMe multipath (a subsystem with several controllers, e.g. a dual-port
    drive), its path `nvme0c0n2` of the namespace `/dev/nvme0n2`, as nvme-cli reads it."""
    ctrl = Path(nvme.controller_path(dev.path)).name
    node = sys_class / ctrl
    if not node.exists():
        return []
    found = set()
    for p in node.iterdir():
        if re.fullmatch(rf"{ctrl}n\d+", p.name):
            found.add(p.name)
        elif m := re.fullmatch(r"nvme(\d+)c\d+n(\d+)", p.name):
            found.add(f"nvme{m[1]}n{m[2]}")
    return sorted(f"/dev/{n}" for n in found if n != dev.kname)


def _refuse_shared(dev: BlockDevice, what: str) -> None:
    others = other_namespaces(dev)
    if others:
        raise PurgeError(f"{what} would also erase the other namespace(s) on this controller: "
                         f"{', '.join(others)}. Refusing (they are not the device under "
                         "test). Delete or detach them first, or use --purge trim (deviation).")


def plan(method: str, dev: BlockDevice, log_file: Path | None,
         say: Callable[[str], None]) -> PurgePlan:
    try:
        ctrl = nvme.id_ctrl(dev.path, log_file)
        ns = nvme.id_ns(dev.path, log_file)
    except nvme.NvmeError as exc:
        raise PurgeError(f"cannot identify {dev.path} to choose its purge, so nothing was "
                         f"erased (fail closed). Check `nvme id-ctrl {dev.path}`, or use "
                         f"--purge trim (a declared deviation): {exc}") from None
    if method in ("auto", "sanitize") and ctrl.sanitize_actions:
        return _sanitize_plan(dev, ctrl, ctrl.sanitize_actions[0], log_file, say)
    if method == "sanitize":
        raise PurgeError(f"--purge sanitize: {dev.path} supports no NVMe Sanitize action "
                         f"(Identify Controller SANICAP = {ctrl.sanicap:#x}). Nothing was "
                         "erased; the test stops here. Use --purge format (NVMe Format with "
                         "Secure Erase) or --purge auto, which picks the best supported method.")
    if ctrl.format_supported:
        return _format_plan(dev, ctrl, ns, log_file, why=(
            "auto: SANICAP = 0 (no Sanitize), so Format NVM" if method == "auto" else
            "--purge format"))
    raise PurgeError(f"{dev.path} supports neither NVMe Sanitize (SANICAP = {ctrl.sanicap:#x}) "
                     f"nor Format NVM (OACS = {ctrl.oacs:#x}): no PTS purge is possible. Use "
                     "--purge trim or --purge none (declared deviations).")


def _format_plan(dev: BlockDevice, ctrl: nvme.Controller, ns: nvme.Namespace,
                 log_file: Path | None, why: str) -> PurgePlan:
    ses = 2 if ctrl.format_crypto_erase else 1
    argv = ["nvme", "format", dev.path, f"--ses={ses}", f"--lbaf={ns.lba_format}", "--force",
            f"--timeout={FORMAT_TIMEOUT_S * 1000}"]
    method = f"NVMe Format SES={ses} ({'crypto erase' if ses == 2 else 'user data erase'})"

    def execute() -> PurgeResult:
        if ctrl.format_all_namespaces:
            _refuse_shared(dev, "NVMe Format (FNA bit 0: applies to all namespaces)")
        start = time.monotonic()
        try:
            nvme.run_admin(argv[1:], log_file, timeout=FORMAT_TIMEOUT_S + 60)
            # ended when nvme-cli returns (the drive answered the Format); the Identify
            # Namespace read after it was counted in too, a purge time late by that read
            seconds = time.monotonic() - start
            after = nvme.id_ns(dev.path, log_file)
        except nvme.NvmeError as exc:
            raise PurgeError(f"{method} of {dev.path} failed, stopping (fail closed; nothing "
                             "ran after it). See the drive's answer below and its error log "
                             f"(`nvme error-log {nvme.controller_path(dev.path)}`), then "
                             f"re-run, or use --purge sanitize if it has one: {exc}") from None
        if after.lba_bytes != ns.lba_bytes or after.nsze != ns.nsze:
            raise PurgeError(f"{method} changed the namespace ({ns.nsze} x {ns.lba_bytes} B "
                             f"-> {after.nsze} x {after.lba_bytes} B); stopping (fail "
                             "closed): the device is no longer the one the test started on. "
                             f"Format it back (`nvme format {dev.path} "
                             f"--lbaf={ns.lba_format}`) or start a new run on it as it is.")
        return PurgeResult(method, argv, seconds, False, (tuple(argv),),
                           f"nvme-cli exit 0; namespace format unchanged (LBA format "
                           f"{ns.lba_format}, {ns.nsze} x {ns.lba_bytes} B)")
    return PurgePlan(method, argv, False, why, execute)


def _sanitize_plan(dev: BlockDevice, ctrl: nvme.Controller, action: str,
                   log_file: Path | None, say: Callable[[str], None]) -> PurgePlan:
    ctrl_path = nvme.controller_path(dev.path)
    argv = ["nvme", "sanitize", ctrl_path, f"--sanact={SANACT[action]}"]
    if action == "overwrite":
        argv.append("--owpass=1")       # OWPASS 0 means 16 passes (NVMe 2.0 §5.24)
    method = f"NVMe Sanitize ({SANITIZE_NAMES[action]})"

    def execute() -> PurgeResult:
        _refuse_shared(dev, "NVMe Sanitize (acts on the whole NVM subsystem)")
        status = _sanitize_status(dev, log_file, method)
        if status.in_progress:
            raise PurgeError(f"a sanitize is already in progress on {ctrl_path} "
                             f"({status.progress:.0%}); wait for it to finish.")
        # from the command's issue: the status read before it (was counted in) is no part
        # of the sanitize, and the purge time verdict allows only the poll's interval
        start = time.monotonic()
        try:
            nvme.run_admin(argv[1:], log_file, timeout=120)
        except nvme.NvmeError as exc:
            raise PurgeError(f"{method} of {ctrl_path} failed to start, stopping (fail "
                             f"closed): {exc}") from None
        final = wait_for_sanitize(dev, log_file, method, say)
        steps = (tuple(argv), ("nvme", "sanitize-log", ctrl_path, "-o", "json"))
        return PurgeResult(method, argv, time.monotonic() - start, False, steps,
                           f"sanitize-log: SSTAT {final.state} (completed successfully), "
                           f"SPROG {final.progress:.0%}")
    return PurgePlan(method, argv, False, f"SANICAP = {ctrl.sanicap:#x}", execute)


def _sanitize_status(dev: BlockDevice, log_file: Path | None, method: str):
    try:
        return nvme.sanitize_log(dev.path, log_file)
    except nvme.NvmeError as exc:
        raise PurgeError(f"{method}: cannot read the sanitize log, so cannot tell whether "
                         "the drive was sanitized; stopping (fail closed). Check `nvme "
                         f"sanitize-log {nvme.controller_path(dev.path)}`, or use --purge "
                         f"format: {exc}") from None


def wait_for_sanitize(dev: BlockDevice, log_file: Path | None, method: str,
                      say: Callable[[str], None], timeout: float = SANITIZE_TIMEOUT_S,
                      poll: float = POLL_S, clock=time.monotonic, sleep=time.sleep):
    """Poll the Sanitize Status log (SPROG, SSTAT) until the sanitize ends; a failure or
    the timeout stops the test."""
    start = clock()
    while True:
        status = _sanitize_status(dev, log_file, method)
        if status.succeeded:
            return status
        if status.failed:
            raise PurgeError(f"{method} failed (sanitize-log SSTAT 3: the last sanitize "
                             "failed). The drive may be in sanitize failure mode; see `nvme "
                             "sanitize --sanact=1` (exit failure mode). Test stopped.")
        if status.state == 0:
            raise PurgeError(f"{method}: the sanitize log says the drive was never sanitized "
                             "after the command was accepted. Test stopped (fail closed). "
                             "Check `nvme sanitize-log` and the drive's firmware, or use "
                             "--purge format.")
        waited = clock() - start
        if waited > timeout:
            raise PurgeError(f"{method} still in progress after {waited / 60:.0f} min "
                             f"({status.progress:.0%}). The drive goes on sanitizing in the "
                             "background; check `nvme sanitize-log` and re-run when done.")
        say(f"sanitize {status.progress:.0%} ({waited:.0f} s)")
        sleep(poll)
