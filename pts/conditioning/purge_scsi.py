"""SCSI (SAS) purge through sg3_utils (PTS 2.0.2 §3.2: SCSI
SANITIZE or FORMAT UNIT).

Both purges start the command with IMMED set (`--early`) and then poll REQUEST SENSE
(`sg_requests --progress`) here, so the suite owns the timeout and every poll is in the
command log; a final `sg_requests --status` must report no sense (exit 0) or the purge
fails. Exit statuses are those of sg3_utils(8). Fail closed: anything else raises PurgeError.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pts.conditioning.purge_plan import PurgeError, PurgePlan, PurgeResult, Recorder
from pts.tools import commands
from pts.tools.sg3 import (
    PACKAGE,
    SANITIZE_ARGS,
    SHORT_S,
    ScsiSupport,
    exit_text,
    progress_percent,
    support,
)

# The drive gives no estimate (REPORT SUPPORTED OPERATION CODES timeouts are optional); the
# sg_sanitize man page cites 9 hours for a block erase of a 2 TB disk: twice that plus margin.
TIMEOUT_S = 24 * 3600
POLL_S = 30.0                  # sg_requests' own interval with --num
SANITIZE_NAMES = {"block": "block erase", "crypto": "cryptographic erase",
                  "overwrite": "overwrite"}


def _final_sense(dev: str, rec: Recorder) -> None:
    """REQUEST SENSE must report no sense. A unit attention is reported once, so ask again."""
    for _ in range(3):
        res = rec(["sg_requests", "--status", dev], timeout=SHORT_S, check=False)
        if res.returncode == 0:
            return
        if res.returncode != 6:
            break
    raise rec.error(f"after the operation, REQUEST SENSE on {dev} does not report success: "
                    f"{exit_text(res)}")


def _wait_done(what: str, dev: str, rec: Recorder, limit: float, poll_s: float,
               sleep: Callable, clock: Callable, progress: Callable | None) -> str:
    deadline, polls, last = clock() + limit, 0, None
    while True:
        res = rec(["sg_requests", "--progress", dev], timeout=SHORT_S, check=False)
        polls += 1
        if res.returncode != 0:
            raise rec.error(f"{what} of {dev}: polling REQUEST SENSE failed, stopping (fail "
                            f"closed): {exit_text(res)}")
        now = progress_percent(res.stdout)
        if now is None:
            break
        last = now
        if progress:
            progress(last)
        if clock() >= deadline:
            raise rec.error(f"{what} of {dev} did not complete within {limit:.0f} s (last "
                            f"progress {last}%). The device goes on by itself; do not use it "
                            f"until `sg_requests --progress {dev}` prints nothing.")
        sleep(poll_s)
    _final_sense(dev, rec)
    seen = f"progress seen, last {last}%" if last is not None else "no progress left"
    return (f"sg_requests --progress polled {polls} times ({seen}); then sg_requests --status: "
            "no sense (exit 0)")


def _purge(what: str, argv: list[str], dev: str, *, log_file, run, timeout, poll_s, sleep,
           clock, progress) -> PurgeResult:
    rec = Recorder(run, log_file, PACKAGE)
    start = clock()
    res = rec(argv, timeout=SHORT_S, check=False)
    if res.returncode != 0:
        raise rec.error(f"{what} of {dev} could not start, nothing was erased (fail closed): "
                        f"{exit_text(res)}")
    verification = _wait_done(what, dev, rec, timeout, poll_s, sleep, clock, progress)
    return PurgeResult(what, argv, clock() - start, False, tuple(rec.steps), verification)


def sanitize(dev_path: str, action: str = "block", *, log_file: Path | None = None,
             run: Callable = commands.run, timeout: float = TIMEOUT_S,
             poll_s: float = POLL_S, sleep: Callable = time.sleep,
             clock: Callable = time.monotonic,
             progress: Callable[[float], None] | None = None) -> PurgeResult:
    """SCSI SANITIZE (block erase, cryptographic erase, or overwrite with zeros)."""
    if action not in SANITIZE_ARGS:
        raise PurgeError(f"unknown SCSI sanitize action {action!r} (block, crypto or overwrite)")
    # --quick: no 15 s "reconsider" countdown (the suite has its own confirmation);
    # --early: return once started (IMMED), progress is polled here.
    argv = ["sg_sanitize", "--quick", "--early", *SANITIZE_ARGS[action], dev_path]
    return _purge(f"SCSI Sanitize ({SANITIZE_NAMES[action]})", argv, dev_path,
                  log_file=log_file, run=run, timeout=timeout, poll_s=poll_s, sleep=sleep,
                  clock=clock, progress=progress)


def format_unit(dev_path: str, *, log_file: Path | None = None, run: Callable = commands.run,
                timeout: float = TIMEOUT_S, poll_s: float = POLL_S,
                sleep: Callable = time.sleep, clock: Callable = time.monotonic,
                progress: Callable[[float], None] | None = None) -> PurgeResult:
    """SCSI FORMAT UNIT, keeping the current logical block size."""
    argv = ["sg_format", "--format", "--quick", "--early", dev_path]
    return _purge("SCSI Format Unit", argv, dev_path, log_file=log_file, run=run,
                  timeout=timeout, poll_s=poll_s, sleep=sleep, clock=clock, progress=progress)


def choose(found: ScsiSupport) -> tuple[str, str]:
    """(method, reason). Order: sanitize block erase > cryptographic erase > format unit.
    SANITIZE is the command whose purpose is removing user data (all of it, incl. caches,
    and it resumes after power loss); block erase resets the flash to its fresh state, which
    the PTS purge is for, a crypto erase only replaces the key. FORMAT UNIT removes data as a
    side effect. Overwrite sanitize is never chosen (slow, wears the flash). A device that
    cannot list its commands gets FORMAT UNIT: if it lacks that too, sg_format fails with
    'invalid opcode' and the purge stops, so nothing is skipped silently."""
    for action in ("block", "crypto"):
        if action in found.sanitize:
            return f"sanitize-{action}", f"sg_opcodes: SANITIZE {SANITIZE_NAMES[action]} listed"
    if found.format_unit:
        return "format-unit", "sg_opcodes: no SANITIZE block/crypto erase; FORMAT UNIT listed"
    if not found.listed:
        return "format-unit", "sg_opcodes failed (REPORT SUPPORTED OPERATION CODES unsupported)"
    raise PurgeError("the device lists neither SANITIZE (block or cryptographic erase) nor "
                     "FORMAT UNIT (sg_opcodes): no SCSI purge is possible. Use --purge trim "
                     "or --purge none (declared deviations).")


def plan(method: str, dev_path: str, *, log_file: Path | None = None,
         run: Callable = commands.run) -> PurgePlan:
    """The SCSI purge `method` ("auto", "sanitize", "format") means for the device; reads the
    supported-commands list only (sg_opcodes), writes nothing."""
    found = support(dev_path, run=run, log_file=log_file)
    if method == "auto":
        chosen, why = choose(found)
    elif method == "sanitize":
        actions = [a for a in ("block", "crypto") if a in found.sanitize]
        if not actions and found.listed:
            raise PurgeError(f"--purge sanitize: {dev_path} lists no SANITIZE block or "
                             "cryptographic erase (sg_opcodes). Nothing was erased.")
        chosen, why = f"sanitize-{(actions or ['block'])[0]}", "--purge sanitize"
    elif method == "format":
        chosen, why = "format-unit", "--purge format"
    else:
        raise PurgeError(f"unknown SCSI purge method {method!r}")
    if chosen == "format-unit":
        return PurgePlan("SCSI Format Unit", ["sg_format", "--format", "--quick", "--early",
                                              dev_path], False, why,
                         lambda: format_unit(dev_path, log_file=log_file, run=run))
    action = chosen.removeprefix("sanitize-")
    return PurgePlan(f"SCSI Sanitize ({SANITIZE_NAMES[action]})",
                     ["sg_sanitize", "--quick", "--early", *SANITIZE_ARGS[action], dev_path],
                     False, why, lambda: sanitize(dev_path, action, log_file=log_file, run=run))
