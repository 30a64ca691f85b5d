"""Several `--resume RUN_DIR` in one session: each run folder is one drive of a
several-device session, its device the one its run.json names (local or ssh://), its child
run `--resume RUN_DIR` (which takes the run's own settings). The parent checks every drive
with the run's own options (round mode, purge, ssh config, fio port, spec) before any child
starts, as for --device and --inventory drives."""

from __future__ import annotations

from collections.abc import Sequence

from pts.results.resume import NOT_TAKEN, ResumeError, ResumeState
from pts.session.devices import MultiDeviceError, labels
from pts.session.inventory import Drive
from pts.tools import hosts

NOT_OPTIONS = (*NOT_TAKEN, "resume")      # and the parent's own --resume list


def drives(folders: Sequence[str], known_options) -> list[Drive]:
    """One Drive per run folder; `known_options` is the session's option namespace (only
    its options are taken from a run.json)."""
    states = []
    for folder in folders:
        try:
            states.append(ResumeState.load(folder))
        except ResumeError as exc:
            raise MultiDeviceError(str(exc)) from None
    devices = [s.run_json.get("device", {}).get("given") for s in states]
    for folder, given in zip(folders, devices, strict=True):
        if not given:
            raise MultiDeviceError(f"--resume {folder}: its run.json names no device")
    if len(set(devices)) < len(devices):
        twice = sorted({d for d in devices if devices.count(d) > 1})
        raise MultiDeviceError(f"--resume: two of the run folders ran on {', '.join(twice)}; "
                               "a device goes on with one run at a time")
    return [Drive(host=_host(given), given=given, label=label, groups=(),
                  options=_options(state, known_options), resume=str(folder))
            for folder, given, label, state in zip(folders, devices, labels(devices), states,
                                                   strict=True)]


def _options(state: ResumeState, known) -> dict:
    """The run's own options the parent checks the drive with (lists as the command line
    gives them)."""
    return {k: v for k, v in replayed(state.options, known, NOT_OPTIONS).items()
            if v is not None}


def replayed(stored: dict, known, skip: tuple[str, ...] = NOT_TAKEN) -> dict:
    """A run's stored options (run.json) as the command line gives them (lists
    comma-joined): those of this session's options (`known`, its namespace) that a resumed
    run takes back (pts.session.options.replay; the parent's checks of a drive)."""
    return {k: ",".join(map(str, v)) if isinstance(v, list) else v
            for k, v in stored.items() if k not in skip and hasattr(known, k)}


def _host(given: str) -> str:
    """Where the drive is, as the session header groups drives."""
    if not hosts.is_remote(given):
        return "this machine"
    try:
        remote = hosts.parse(given, None, hosts.DEFAULT_FIO_PORT)[0]
    except hosts.RemoteError:
        return given
    return remote.target + (f":{remote.ssh_port}" if remote.ssh_port else "")
