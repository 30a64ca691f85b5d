"""ATA purge and write cache through hdparm (PTS 2.0.2 §3.2: ATA Security Erase or Sanitize).

Output formats are those of hdparm 9.x (identify.c, hdparm.c). Every command is an argv list;
every command a purge runs, clean-up included, is kept in order (PurgeResult.steps, and the
`steps` attribute of a PurgeError). Fail closed: anything unexpected raises PurgeError.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pts import commands, write_cache
from pts.purge_types import PurgeError, PurgePlan, PurgeResult
from pts.write_cache import CacheState

TOOL = "hdparm"
# A fixed, documented password rather than a random one: if the suite is killed (kill -9,
# power loss) between setting it and the erase, the operator can clear it without having
# to find a log. It exists on the drive only for the duration of one erase.
PASSWORD = "snia-pts-purge"
MARGIN_S = 3600                # added to twice the drive's own erase estimate
UNKNOWN_ERASE_S = 8 * 3600     # no estimate in IDENTIFY words 89/90: assume a slow drive
SANITIZE_DEFAULT_S = 6 * 3600  # ATA gives no sanitize estimate; block erase is seconds-minutes
POLL_S = 10.0
SHORT_S = 120                  # identify, set-pass, disable: hdparm's own limit is 15 s

SANITIZE_ARGS = {"block": ["--sanitize-block-erase"],
                 "crypto": ["--sanitize-crypto-scramble"],
                 # One pass of zeros; hdparm's default of 0 passes means 16.
                 "overwrite": ["--sanitize-overwrite-passes", "1",
                               "--sanitize-overwrite", "hex:00000000"]}
SANITIZE_NAMES = {"block": "block erase", "crypto": "crypto scramble", "overwrite": "overwrite"}
METHODS = ("sanitize-block", "sanitize-crypto", "sanitize-overwrite", "security-erase-enhanced",
           "security-erase")


@dataclass(frozen=True)
class AtaIdentity:
    model: str = ""
    security_supported: bool = False     # False also when hdparm prints no Security section
    security_enabled: bool = False       # a user password is set
    locked: bool = False
    frozen: bool = False
    count_expired: bool = False          # too many wrong passwords: needs a power cycle
    enhanced_erase_supported: bool = False
    erase_minutes: int | None = None     # the drive's estimate (IDENTIFY word 89)
    enhanced_erase_minutes: int | None = None  # word 90
    sanitize_supported: bool = False
    sanitize_block_erase: bool = False
    sanitize_crypto_scramble: bool = False
    sanitize_overwrite: bool = False

    def sanitize_actions(self) -> list[str]:
        if not self.sanitize_supported:
            return []
        have = {"block": self.sanitize_block_erase, "crypto": self.sanitize_crypto_scramble,
                "overwrite": self.sanitize_overwrite}
        return [action for action, ok in have.items() if ok]


_SECURITY_LINE = re.compile(r"^(not |\(\?\) )?(supported|enabled|locked|frozen|"
                            r"expired: security count|supported: enhanced erase)$")
_SECURITY_FIELDS = {"supported": "security_supported", "enabled": "security_enabled",
                    "locked": "locked", "frozen": "frozen",
                    "expired: security count": "count_expired",
                    "supported: enhanced erase": "enhanced_erase_supported"}
_ERASE_TIME = re.compile(r"(?:more than )?(\d+)\s*min for (ENHANCED )?SECURITY ERASE UNIT")
_SANITIZE_LINE = re.compile(r"^(?:\*\s+)?(not\s+)?(SANITIZE feature set|BLOCK_ERASE_EXT command|"
                            r"CRYPTO_SCRAMBLE_EXT command|OVERWRITE_EXT command)$")
_SANITIZE_FIELDS = {"SANITIZE feature set": "sanitize_supported",
                    "BLOCK_ERASE_EXT command": "sanitize_block_erase",
                    "CRYPTO_SCRAMBLE_EXT command": "sanitize_crypto_scramble",
                    "OVERWRITE_EXT command": "sanitize_overwrite"}
_AFTER_SECURITY = re.compile(r"^\s*(Logical Unit WWN|Checksum|HW reset results|Integrity word)")


def _words(line: str) -> str:
    """'\\tnot\\tfrozen' and '    not    frozen' both become 'not frozen'."""
    return " ".join(line.split())


def _security_block(text: str) -> list[str] | None:
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip().startswith("Security:")]
    if not starts:
        return None     # hdparm prints no Security section when the feature set is absent
    block = []
    for line in lines[starts[0] + 1:]:
        if _AFTER_SECURITY.match(line):
            break
        block.append(line)
    return block


def parse_identify(text: str) -> AtaIdentity:
    """Parse `hdparm -I DEV`. Unknown or missing lines leave a field False/None."""
    found: dict = {}
    model = re.search(r"Model Number:\s*(.+)", text)
    found["model"] = model.group(1).strip() if model else ""
    for line in _security_block(text) or []:
        m = _SECURITY_LINE.match(_words(line))
        if m:
            found[_SECURITY_FIELDS[m.group(2)]] = m.group(1) is None
        for minutes, enhanced in _ERASE_TIME.findall(line):
            found["enhanced_erase_minutes" if enhanced else "erase_minutes"] = int(minutes)
    for line in text.splitlines():
        m = _SANITIZE_LINE.match(_words(line))
        if m:
            found[_SANITIZE_FIELDS[m.group(2)]] = m.group(1) is None
    return AtaIdentity(**found)


@dataclass(frozen=True)
class SanitizeStatus:
    state: str              # "SD0".."SD4", "unsupported" or "unknown"
    progress: int | None    # percent, while SD2
    completed_ok: bool      # "Last Sanitize Operation Completed Without Error"
    error: str = ""         # hdparm's "SANITIZE device error reason"


def parse_sanitize_status(text: str) -> SanitizeStatus:
    """Parse `hdparm --sanitize-status DEV` (stdout and stderr together)."""
    if "SANITIZE feature set is not supported" in text:
        return SanitizeStatus("unsupported", None, False)
    state = re.search(r"State:\s*(SD\d)", text)
    progress = re.search(r"Progress:\s*0x[0-9a-fA-F]+\s*\((\d+)%\)", text)
    error = re.search(r"SANITIZE device error reason:\s*(.+)", text)
    return SanitizeStatus(state.group(1) if state else "unknown",
                          int(progress.group(1)) if progress else None,
                          "Completed Without Error" in text,
                          error.group(1).strip() if error else "")


class Recorder:
    """Runs the commands of one purge and keeps every argv in order, before it runs (so a
    command that hangs or is interrupted is recorded too)."""

    def __init__(self, run: Callable, log_file: Path | None, package: str):
        self.run, self.log_file, self.package = run, log_file, package
        self.steps: list[tuple[str, ...]] = []

    def __call__(self, argv: list[str], *, timeout: float | None = None,
                 check: bool = True) -> commands.CommandResult:
        self.steps.append(tuple(argv))
        try:
            return self.run(argv, log_file=self.log_file, timeout=timeout, check=check)
        except commands.ToolMissing as exc:
            raise self.error(f"{exc}; install it with `apt-get install {self.package}`. "
                             "Nothing was erased.") from None

    def error(self, message: str) -> PurgeError:
        return PurgeError(message, tuple(self.steps))


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


# --- write cache (PTS-E WCD / PTS-C WCE) ---------------------------------------------------

def parse_write_cache(text: str) -> bool | None:
    """` write-caching =  1 (on)` -> True; `= not supported` or nothing -> None."""
    m = re.search(r"write-caching\s*=\s*(\d+)", text)
    return bool(int(m.group(1))) if m else None


def read_write_cache(dev_path: str, *, run: Callable = commands.run,
                     log_file: Path | None = None) -> bool | None:
    """The drive's volatile write cache (hdparm -W); None when the drive has none or hdparm
    cannot tell. A failing hdparm raises commands.ToolError."""
    return parse_write_cache(run([TOOL, "-W", dev_path], log_file=log_file, timeout=SHORT_S)
                             .stdout)


def set_write_cache(dev_path: str, enabled: bool, *, run: Callable = commands.run,
                    log_file: Path | None = None) -> CacheState:
    """Set with hdparm -W0/-W1, then read back. The result is what the drive reports after,
    never what was asked: a drive that ignores the set gives settable=False."""
    flag = "-W1" if enabled else "-W0"
    return write_cache.set_and_read_back(
        [TOOL, flag, dev_path], lambda: read_write_cache(dev_path, run=run, log_file=log_file),
        enabled, f"hdparm {flag}, read back with hdparm -W", run, log_file, SHORT_S)
