"""ATA purge through hdparm (PTS 2.0.2 §3.2: ATA Security Erase or Sanitize).

hdparm's argv and parsing are pts.tools.hdparm. Every command is an argv list;
every command a purge runs, clean-up included, is kept in order (PurgeResult.steps, and the
`steps` attribute of a PurgeError). Fail closed: anything unexpected raises PurgeError.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from pathlib import Path

from pts.conditioning.purge_plan import PurgeError, PurgePlan, PurgeResult, Recorder
from pts.tools import commands
from pts.tools.hdparm import (
    SANITIZE_ARGS,
    SHORT_S,
    TOOL,
    AtaIdentity,
    SanitizeStatus,
    parse_identify,
    parse_sanitize_status,
)

# A fixed, documented password rather than a random one: if the suite is killed (kill -9,
# power loss) between setting it and the erase, the operator can clear it without having
# to find a log. It exists on the drive only for the duration of one erase.
PASSWORD = "snia-pts-purge"
MARGIN_S = 3600                # added to twice the drive's own erase estimate
UNKNOWN_ERASE_S = 8 * 3600     # no estimate in IDENTIFY words 89/90: assume a slow drive
SANITIZE_DEFAULT_S = 6 * 3600  # ATA gives no sanitize estimate; block erase is seconds-minutes
POLL_S = 10.0

SANITIZE_NAMES = {"block": "block erase", "crypto": "crypto scramble", "overwrite": "overwrite"}
METHODS = ("sanitize-block", "sanitize-crypto", "sanitize-overwrite", "security-erase-enhanced",
           "security-erase")

def _first_line(exc: BaseException) -> str:
    """One line for a message; for a failed tool, what it printed last (hdparm's perror)."""
    line = (str(exc).splitlines() or [type(exc).__name__])[0]
    result = getattr(exc, "result", None)
    if result is not None and result.excerpt(300):
        line += " -- " + " / ".join(result.excerpt(300).splitlines())
    return line


def identify(dev_path: str, rec: Recorder) -> AtaIdentity:
    return parse_identify(rec([TOOL, "-I", dev_path], timeout=SHORT_S).stdout)


# --- ATA Security Erase ------------------------------------------------------------------

def _security_refusal(dev: str, ident: AtaIdentity, enhanced: bool | None) -> str | None:
    """Why the erase cannot start, or None. Checked before anything is written."""
    if not ident.security_supported:
        return (f"{dev} does not support the ATA Security feature set (hdparm -I shows no "
                "'supported' in its Security section), so ATA Security Erase is impossible. "
                "Use ATA Sanitize if the drive has it (--purge auto picks it).")
    if ident.frozen:
        return (f"ATA security on {dev} is frozen (the BIOS/UEFI sends SECURITY FREEZE LOCK at "
                "boot). Nothing was written and no password was set. Unfreeze it by suspending "
                "and resuming the machine (`systemctl suspend`, then wake it) or by hot-plugging "
                "the drive (unplug and re-plug its SATA cable while the system runs, on a "
                f"hot-plug capable port), check that `hdparm -I {dev}` shows 'not frozen', and "
                "run again.")
    if ident.count_expired:
        return (f"ATA security on {dev} reports 'expired: security count' (too many wrong "
                "passwords). Power-cycle the drive, then run again.")
    if ident.locked or ident.security_enabled:
        state = "locked" if ident.locked else "enabled (a user password is set)"
        return (f"ATA security on {dev} is {state} with a password the suite did not set in "
                "this run. The suite will not guess (wrong guesses count towards 'expired'). "
                f"Clear it with `hdparm --user-master u --security-disable PASSWORD {dev}`; if "
                f"an earlier run of this suite was interrupted, PASSWORD is {PASSWORD!r}.")
    if enhanced and not ident.enhanced_erase_supported:
        return (f"{dev} does not support ENHANCED SECURITY ERASE UNIT ('not supported: "
                "enhanced erase'); use the normal erase.")
    return None


def erase_timeout_s(ident: AtaIdentity, enhanced: bool) -> float:
    """Twice the drive's own estimate plus a margin. (hdparm itself waits at least the
    estimate + 60 min, longer on large drives; past this limit the suite stops hdparm and
    clears its password.)"""
    minutes = ident.enhanced_erase_minutes if enhanced else ident.erase_minutes
    minutes = minutes or ident.erase_minutes or ident.enhanced_erase_minutes
    return minutes * 2 * 60 + MARGIN_S if minutes else UNKNOWN_ERASE_S


def _disable_argv(dev: str, password: str) -> list[str]:
    # hdparm's --security-disable first sends SECURITY UNLOCK, so it also works on a drive
    # that was power-cycled (and so locked) in between.
    return [TOOL, "--user-master", "u", "--security-disable", password, dev]


def _left_with(dev: str, password: str, problem: str) -> str:
    return (f"The drive {dev} is left with the ATA user password {password!r} ({problem}). "
            f"Clear it with: {shlex.join(_disable_argv(dev, password))}")


def _clear_password(dev: str, password: str, rec: Recorder) -> str | None:
    """Remove the suite's password if it is still set; None when the drive is clear,
    else the message that says how to clear it by hand."""
    try:
        enabled = identify(dev, rec).security_enabled
    except (commands.ToolError, PurgeError):
        enabled = True   # state unknown (drive busy?): try to clear anyway
    if not enabled:
        return None
    try:
        rec(_disable_argv(dev, password), timeout=SHORT_S)
        if not identify(dev, rec).security_enabled:
            return None
        problem = "security is still enabled after --security-disable"
    except (commands.ToolError, PurgeError) as exc:
        problem = f"clean-up failed: {_first_line(exc)}"
    return _left_with(dev, password, problem)


def _fail_after_password(exc: BaseException, dev: str, password: str, rec: Recorder):
    """Every exit after the password was (possibly) set comes here: clear it, then report
    the original cause. Ctrl-C is re-raised as it was, with a note if clean-up failed."""
    try:
        left = _clear_password(dev, password, rec)
    except BaseException as again:   # e.g. a second Ctrl-C during the clean-up
        again.add_note(_left_with(dev, password, "clean-up interrupted"))
        raise
    if not isinstance(exc, Exception):
        if left:
            exc.add_note(left)
        raise exc
    cause = _first_line(exc)
    raise rec.error(f"ATA Security Erase of {dev} failed, stopping (fail closed): {cause}. "
                    + (left or "The suite's password was cleared again.")) from None


def security_erase(dev_path: str, *, enhanced: bool | None = None,
                   log_file: Path | None = None, run: Callable = commands.run,
                   password: str = PASSWORD, clock: Callable = time.monotonic) -> PurgeResult:
    """ATA SECURITY ERASE UNIT (enhanced when supported, unless `enhanced` says otherwise)."""
    rec = Recorder(run, log_file, TOOL)
    start = clock()
    ident = identify(dev_path, rec)
    refusal = _security_refusal(dev_path, ident, enhanced)
    if refusal:
        raise rec.error(refusal)
    use_enhanced = ident.enhanced_erase_supported if enhanced is None else enhanced
    option = "--security-erase-enhanced" if use_enhanced else "--security-erase"
    erase = [TOOL, "--user-master", "u", option, password, dev_path]
    try:
        rec([TOOL, "--user-master", "u", "--security-set-pass", password, dev_path],
            timeout=SHORT_S)
        rec(erase, timeout=erase_timeout_s(ident, use_enhanced))
        after = identify(dev_path, rec)
        if after.security_enabled or after.locked:
            raise commands.ToolFailed("the erase command returned, but hdparm -I still shows "
                                      "security enabled: the erase did not complete")
    except BaseException as exc:
        _fail_after_password(exc, dev_path, password, rec)
    name = "ATA Security Erase (enhanced)" if use_enhanced else "ATA Security Erase"
    return PurgeResult(name, erase, clock() - start, False, tuple(rec.steps),
                       "hdparm -I after the erase: security not enabled, not locked (the "
                       "erase cleared the suite's password)")


# --- ATA Sanitize ------------------------------------------------------------------------

def _sanitize_refusal(dev: str, ident: AtaIdentity, action: str) -> str | None:
    if action not in SANITIZE_ARGS:
        return f"unknown ATA sanitize action {action!r} (block, crypto or overwrite)"
    if action not in ident.sanitize_actions():
        have = ", ".join(ident.sanitize_actions()) or "none"
        return (f"{dev} does not support ATA Sanitize {SANITIZE_NAMES[action]} (hdparm -I; "
                f"supported sanitize actions: {have}). Nothing was erased.")
    return None


def _state_refusal(dev: str, status: SanitizeStatus) -> str | None:
    if status.state == "SD1":
        return (f"ATA Sanitize on {dev} is frozen (SANITIZE FREEZE LOCK, sent by the BIOS or "
                "OS since power-on). Power-cycle the drive (or the machine), then run again.")
    if status.state == "SD2":
        return (f"an ATA Sanitize is already running on {dev} (hdparm --sanitize-status: SD2). "
                "Wait until it completes, then run again.")
    if status.state not in ("SD0", "SD4"):
        return f"hdparm --sanitize-status of {dev} is unreadable ({status.state}); stopping."
    return None


def _check_started(dev: str, res: commands.CommandResult) -> str | None:
    text = res.stdout + res.stderr
    if res.returncode != 0:
        return f"hdparm exited with status {res.returncode}: {res.excerpt()}"
    if "bad/missing sense data" in text:
        # Seen with SATA behind USB bridges / some SAT layers: hdparm still prints "started"
        # although the drive never ran the command (it then reports SD0 with no completion).
        return ("hdparm reported 'SG_IO: bad/missing sense data': the SCSI-to-ATA layer between "
                f"the host and {dev} did not return the drive's status, so it is unknown "
                "whether the sanitize started. Connect the drive to a native SATA (AHCI) port.")
    if "Operation started in background" not in text:
        return f"hdparm did not report 'Operation started in background': {res.excerpt()}"
    return None


def sanitize_timeout_s(ident: AtaIdentity) -> float:
    minutes = ident.enhanced_erase_minutes or ident.erase_minutes
    return minutes * 2 * 60 + MARGIN_S if minutes else SANITIZE_DEFAULT_S


def _status(dev: str, rec: Recorder) -> SanitizeStatus:
    res = rec([TOOL, "--sanitize-status", dev], timeout=SHORT_S, check=False)
    status = parse_sanitize_status(res.stdout + "\n" + res.stderr)
    if res.returncode != 0 and status.state == "unknown":
        return SanitizeStatus("unknown", None, False, res.excerpt())
    return status


def _end_state(dev: str, status: SanitizeStatus, seen_running: bool, was_ok: bool) -> str:
    """'' while running; 'ok'; else the reason the sanitize failed."""
    if status.state == "SD2":
        return ""
    if status.completed_ok and (seen_running or not was_ok):
        return "ok"
    if status.completed_ok:
        # The completion bit was already set by an earlier sanitize: this one was never seen
        # running, so its completion is not proven.
        return (f"{dev} never reported this sanitize in progress, and 'Completed Without "
                "Error' was already set before it started: whether it ran is unknown")
    reason = f" ({status.error})" if status.error else ""
    return (f"{dev} reports {status.state} without 'Completed Without Error'{reason}: the "
            "sanitize did not run or failed")


def _poll(dev: str, rec: Recorder, was_ok: bool, limit: float, poll_s: float,
          sleep: Callable, clock: Callable, progress: Callable | None) -> str:
    deadline, polls, last = clock() + limit, 0, None
    while True:
        status = _status(dev, rec)
        polls += 1
        end = _end_state(dev, status, last is not None, was_ok)
        if end == "ok":
            seen = f"in progress seen, last {last}%" if last is not None else "completed"
            return (f"hdparm --sanitize-status polled {polls} times ({seen}); final: "
                    f"{status.state}, 'Last Sanitize Operation Completed Without Error'")
        if end:
            raise rec.error(f"ATA Sanitize of {dev} failed, stopping (fail closed): {end}.")
        last = status.progress if status.progress is not None else 0
        if progress:
            progress(last)
        if clock() >= deadline:
            raise rec.error(f"ATA Sanitize of {dev} did not complete within {limit:.0f} s "
                            f"(last progress {last}%). The drive goes on by itself and cannot "
                            f"be stopped; do not use it until `hdparm --sanitize-status {dev}` "
                            "shows 'Completed Without Error'.")
        sleep(poll_s)


def sanitize(dev_path: str, action: str = "block", *, log_file: Path | None = None,
             run: Callable = commands.run, timeout: float | None = None,
             poll_s: float = POLL_S, sleep: Callable = time.sleep,
             clock: Callable = time.monotonic,
             progress: Callable[[int], None] | None = None) -> PurgeResult:
    """ATA SANITIZE (block erase, crypto scramble or overwrite), polled to completion."""
    rec = Recorder(run, log_file, TOOL)
    start = clock()
    ident = identify(dev_path, rec)
    refusal = _sanitize_refusal(dev_path, ident, action)
    before = _status(dev_path, rec) if not refusal else None
    refusal = refusal or _state_refusal(dev_path, before)
    if refusal:
        raise rec.error(refusal)
    argv = [TOOL, "--yes-i-know-what-i-am-doing", *SANITIZE_ARGS[action], dev_path]
    problem = _check_started(dev_path, rec(argv, timeout=SHORT_S, check=False))
    if problem:
        raise rec.error(f"ATA Sanitize of {dev_path} failed, stopping (fail closed): {problem}")
    verification = _poll(dev_path, rec, before.completed_ok,
                         timeout or sanitize_timeout_s(ident), poll_s, sleep, clock, progress)
    return PurgeResult(f"ATA Sanitize ({SANITIZE_NAMES[action]})", argv, clock() - start,
                       False, tuple(rec.steps), verification)


# --- choosing ----------------------------------------------------------------------------

def choose(ident: AtaIdentity) -> tuple[str, str]:
    """(method, reason). Order: sanitize block erase > sanitize crypto scramble > security
    erase enhanced > normal. Sanitize first: it needs no password (nothing is left on the
    drive if the suite dies), survives power loss, reports progress and covers all user
    data incl. over-provisioning. Block erase before crypto: it erases the NAND and resets
    the FTL to its fresh-out-of-box state, which the PTS purge is for; a crypto scramble only
    changes the key, the media may stay 'written'. Overwrite is never chosen: it writes the
    whole medium (slow, wears the flash) and does not reset the FTL either."""
    actions = ident.sanitize_actions()
    for action in ("block", "crypto"):
        if action in actions:
            return f"sanitize-{action}", f"hdparm -I: SANITIZE {SANITIZE_NAMES[action]} supported"
    refusal = _security_refusal("the drive", ident, None)
    if refusal:
        raise PurgeError(f"no ATA purge is possible: no SANITIZE block erase or crypto "
                         f"scramble, and {refusal}")
    if ident.enhanced_erase_supported:
        return "security-erase-enhanced", "no SANITIZE; enhanced security erase supported"
    return "security-erase", "no SANITIZE; security erase supported (not enhanced)"


def _execute(method: str, dev_path: str, log_file: Path | None, run: Callable) -> PurgeResult:
    if method.startswith("sanitize-"):
        return sanitize(dev_path, method.removeprefix("sanitize-"), log_file=log_file, run=run)
    return security_erase(dev_path, enhanced=method == "security-erase-enhanced",
                          log_file=log_file, run=run)


def plan(method: str, dev_path: str, *, log_file: Path | None = None,
         run: Callable = commands.run) -> PurgePlan:
    """The ATA purge `method` ("auto", "sanitize", "security-erase") means for the drive;
    reads IDENTIFY only (hdparm -I), writes nothing."""
    ident = identify(dev_path, Recorder(run, log_file, TOOL))
    chosen, why = choose(ident) if method == "auto" else (method, f"--purge {method}")
    if chosen == "sanitize":
        actions = [a for a in ("block", "crypto") if a in ident.sanitize_actions()]
        if not actions:
            raise PurgeError(f"--purge sanitize: {dev_path} supports no ATA SANITIZE block "
                             "erase or crypto scramble (hdparm -I). Nothing was erased.")
        chosen = f"sanitize-{actions[0]}"
    if chosen == "security-erase" and ident.enhanced_erase_supported:
        chosen = "security-erase-enhanced"
    if chosen not in METHODS:
        raise PurgeError(f"unknown ATA purge method {method!r}")
    if chosen.startswith("sanitize-"):
        action = chosen.removeprefix("sanitize-")
        label = f"ATA Sanitize ({SANITIZE_NAMES[action]})"
        argv = [TOOL, "--yes-i-know-what-i-am-doing", *SANITIZE_ARGS[action], dev_path]
    else:
        enhanced = chosen.endswith("enhanced")
        label = "ATA Security Erase" + (" (enhanced)" if enhanced else "")
        option = "--security-erase-enhanced" if enhanced else "--security-erase"
        argv = [TOOL, "--user-master", "u", option, PASSWORD, dev_path]
    return PurgePlan(label, argv, False, why,
                     lambda: _execute(chosen, dev_path, log_file, run))
