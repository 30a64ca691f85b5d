"""Devices on other hosts (`--device ssh://[USER@]HOST[:SSHPORT]/dev/NAME`): the options,
resolving the device over ssh, what is refused for a remote device (with the fix), and the
--dry-run lines that show the ssh and fio client commands a run would use.

The I/O runs under `fio --server` on the DUT host (started there by its owner, port 8765 or
--fio-port), driven from here by `fio --client`; identity, the safety gate, the purge by
discard, write cache and health run the same wrappers over OpenSSH (pts.tools.hosts).
Everything a run records stays on this host (the controller).
"""

from __future__ import annotations

import shlex
import socket

from pts.device.identity import BlockDevice, DeviceError, resolve
from pts.tools import commands, hosts

REMOTE_PURGES = ("trim", "none")


def resolve_given(given: str, ssh_config: str | None = None,
                  fio_port: int = hosts.DEFAULT_FIO_PORT) -> BlockDevice:
    """A local device path or an ssh:// URL, resolved (over ssh for a remote one)."""
    if not hosts.is_remote(given):
        return resolve(given)
    try:
        remote, path = hosts.parse(given, ssh_config, fio_port)
    except hosts.RemoteError as exc:
        raise DeviceError(str(exc)) from None
    probe = hosts.SshHost(remote)
    try:
        probe.run(["true"], timeout=60)
    except commands.ToolError as exc:
        raise DeviceError(f"{given}: cannot run commands on {remote.target} over ssh: "
                          f"{(str(exc).splitlines() or [''])[0]}. Check that `"
                          f"{shlex.join(remote.ssh_argv(['true']))}` works without a "
                          "password prompt (key authentication).") from None
    try:
        dev = resolve(given, remote, path)
    except commands.ToolError as exc:        # ssh failed between two reads
        raise DeviceError(f"{given}: reading the device on {remote.target} failed: "
                          f"{(str(exc).splitlines() or [''])[0]}") from None
    try:
        with socket.create_connection((remote.host.strip("[]"), remote.fio_port), timeout=10):
            pass
    except OSError as exc:
        raise DeviceError(f"{given}: fio --server is not reachable at {remote.fio_client()} "
                          f"({exc.strerror or exc}). Start it on the DUT host: `fio "
                          f"--server=,{remote.fio_port}` (the same fio version as here), or "
                          "give its port with --fio-port N") from None
    _check_fio_versions(given, probe)
    return dev


def _check_fio_versions(given: str, host: hosts.SshHost) -> None:
    """fio's client/server protocol changes between versions: the same fio on both sides.
    A DUT host whose fio is not on ssh's PATH (a server started from elsewhere) is not
    checked here; fio itself then refuses a mismatch when the run starts."""
    try:
        here = commands.run(["fio", "--version"], timeout=30).stdout.strip()
        there = host.run(["fio", "--version"], timeout=60).stdout.strip()
    except commands.ToolError:
        return
    if here and there and here != there:
        raise DeviceError(f"{given}: fio on the DUT host is {there}, here it is {here}; fio's "
                          "client/server protocol needs the same version on both. Install "
                          f"{here} on {host.remote.target} (or this one's there) and restart "
                          "its fio --server")


def default_round_mode(given: str | None) -> str:
    """--round-mode when not given: pipelined, but stonewalled for an ssh:// device (a
    pipelined round needs its gate script where the I/O runs)."""
    return "stonewalled" if hosts.is_remote(given) else "pipelined"


def refusal(given: str | None, *, round_mode: str | None, purge: str) -> str | None:
    """Why these options cannot run on the ssh:// device `given` (None: they can;
    round_mode None: not given, the default applies)."""
    if not hosts.is_remote(given):
        return None
    if round_mode == "pipelined":
        return (f"--round-mode pipelined with {given}: a pipelined round waits for each "
                "point's exact start in a script on the host that runs the I/O, which a "
                "DUT host behind fio --server does not have. Add --round-mode stonewalled "
                "(one fio process per round, points back to back) or --round-mode per-point")
    if purge not in REMOTE_PURGES:
        return (f"--purge {purge} with {given}: a spec purge (NVMe Sanitize/Format, ATA "
                "Security Erase, SCSI Format Unit/Sanitize) is not supported on a device on "
                "another host yet (its verification writes marker blocks through this "
                "host's block layer). Use --purge trim (blkdiscard over ssh; a declared "
                "deviation) or --purge none, or run the suite on the DUT host itself")
    return None


def dry_run_lines(dev: BlockDevice, fio_binary: str = "fio") -> list[str]:
    """What a run on a remote device runs where (the ssh and fio client commands)."""
    if dev.remote is None:
        return []
    r = dev.remote
    ssh = r.ssh_argv(["CMD", "ARG..."])
    return [
        f"remote: {dev.path} on {r.target}; tools run there over OpenSSH as "
        f"`{shlex.join(ssh[:-1])} 'CMD ARG...'` (the argv quoted once), e.g. the safety "
        f"gate reads `{shlex.join(r.ssh_argv(['cat', '--', '/proc/self/mountinfo']))}`",
        f"remote: fio I/O through fio's client/server protocol: `fio --server` must be "
        f"running on {r.host} (port {r.fio_port}); every fio run is "
        f"`{fio_binary} --output-format=json --output=RUN/raw/TEST/NAME.json "
        f"--client={r.fio_client()} RUN/raw/TEST/NAME.fio` (job files, JSON and logs stay "
        "on this host)",
    ]
