"""A lab's drives in one file: `pytest pts/ --inventory lab.toml [--only GROUP,...]`.

    [defaults]                      # optional: every drive unless its host or drive says
    spec = "pts-2.0.2-enterprise"   #   otherwise (spec, purge, round_mode, datasheet)

    [hosts.rack1-dut1]              # a host: the drives are on it, reached over ssh
    address = "dut1.lab"            # default: the host's name
    user = "root"                   # ssh://USER@ADDRESS:SSH_PORT/dev/NAME
    ssh_port = 22
    ssh_config = "lab_ssh_config"   # --ssh-config (relative: to this file's folder)
    fio_port = 8765                 # --fio-port
    purge = "trim"                  # --purge, --round-mode for this host's drives
    round_mode = "stonewalled"
    groups = ["rack1"]

    [[hosts.rack1-dut1.drives]]
    by_id = "nvme-ACME_X1_SN0001"   # /dev/disk/by-id/NAME, or path = "/dev/nvme0n1"
    label = "jbof1-slot0"           # item ids and output prefixes (default: from the path)
    datasheet = "sheets/acme-x1.toml"
    groups = ["jbof1"]

    [hosts.controller]              # local = true: drives of this machine (no ssh)
    local = true

Every drive becomes one `--device` of today's several-device session (pts.session): the
same safety gate, lock and refusal rules, per drive, before anything is written; an
unreachable host refuses its drives with the reason (or --skip-refused-devices leaves them
out). A drive's own options (purge, round mode, spec, datasheet, ssh config, fio port) go on
its child run's command line after the session's, so they win. `--only A,B` keeps the drives
whose label, host or one of whose groups (the host's and the drive's) is A or B.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pts.config import option_table
from pts.config.spec import SpecError, load_spec

OPTION_KEYS = ("spec", "purge", "round_mode", "datasheet")        # defaults, host, drive
HOST_KEYS = ("address", "local", "user", "ssh_port", "ssh_config", "fio_port", "groups",
             "drives", *OPTION_KEYS)
DRIVE_KEYS = ("path", "by_id", "label", "groups", *OPTION_KEYS)
TOP_KEYS = ("defaults", "hosts")


class InventoryError(Exception):
    """The inventory cannot be used; the message names the file, host and key, and the fix."""


@dataclass(frozen=True)
class Drive:
    host: str
    given: str                      # the --device of its child run (path or ssh:// URL)
    label: str
    groups: tuple[str, ...]
    options: dict[str, str | int] = field(default_factory=dict)   # option dest -> value
    resume: str | None = None       # several --resume: the run folder its child goes on with

    def child_args(self) -> list[str]:
        """The drive's own options, for its child run's command line (a resumed run's child
        gets only its --resume: it takes the run's own settings from run.json)."""
        if self.resume is not None:
            return ["--resume", self.resume]
        out: list[str] = []
        for dest, value in self.options.items():
            out += ["--" + dest.replace("_", "-"), str(value)]
        return out

    def option(self, dest: str, default=None):
        return self.options.get(dest, default)


@dataclass(frozen=True)
class Host:
    name: str
    local: bool
    target: str                     # what the plan shows: "this machine" or USER@ADDR:PORT
    options: dict[str, str | int]


@dataclass(frozen=True)
class Inventory:
    path: Path
    hosts: tuple[Host, ...]
    drives: tuple[Drive, ...]

    def select(self, only: str | None) -> list[Drive]:
        """The drives --only names (all without it); an unknown name is an error."""
        if not only:
            return list(self.drives)
        wanted = [w.strip() for w in only.split(",") if w.strip()]
        known = {d.label for d in self.drives} | {h.name for h in self.hosts} | {
            g for d in self.drives for g in d.groups}
        if unknown := [w for w in wanted if w not in known]:
            raise InventoryError(
                f"{self.path}: --only {', '.join(unknown)}: no drive label, host or group of "
                f"that name; known: {', '.join(sorted(known))}")
        return [d for d in self.drives
                if {d.label, d.host, *d.groups} & set(wanted)]


def load(path: str | Path) -> Inventory:
    """The inventory file, checked whole: any mistake raises InventoryError naming it."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InventoryError(f"--inventory {path}: cannot read it ({exc.strerror or exc})") \
            from None
    except tomllib.TOMLDecodeError as exc:
        raise InventoryError(f"{path}: not valid TOML: {exc}") from None
    _keys(data, TOP_KEYS, f"{path}")
    defaults = _options(data.get("defaults", {}), f"{path}: [defaults]", path.parent)
    table = data.get("hosts")
    if not isinstance(table, dict) or not table:
        raise InventoryError(f"{path}: no [hosts.NAME] table: give at least one host with "
                             "its [[hosts.NAME.drives]]")
    hosts_, drives = [], []
    for name, host in table.items():
        h, ds = _host(path, name, host, defaults)
        hosts_.append(h)
        drives += ds
    _unique(path, drives)
    return Inventory(path, tuple(hosts_), tuple(drives))


def _host(path: Path, name: str, raw, defaults: dict) -> tuple[Host, list[Drive]]:
    where = f"{path}: host '{name}'"
    if not isinstance(raw, dict):
        raise InventoryError(f"{where}: must be a table ([hosts.{name}])")
    _keys(raw, HOST_KEYS, where)
    local = _typed(raw, "local", bool, where, False)
    ssh = {k: raw[k] for k in ("address", "user", "ssh_port", "ssh_config", "fio_port")
           if k in raw}
    if local and ssh:
        raise InventoryError(f"{where}: local = true with {', '.join(ssh)}: a local host has "
                             "no ssh settings; remove them or local")
    options = defaults | _options(raw, where, path.parent)
    target = "this machine"
    if not local:
        address = _typed(raw, "address", str, where, name)
        user = _typed(raw, "user", str, where, None)
        port = _port(raw, "ssh_port", where)
        if fio := _port(raw, "fio_port", where):
            options["fio_port"] = fio
        if "ssh_config" in raw:
            options["ssh_config"] = str(_relative(path.parent, _typed(raw, "ssh_config", str,
                                                                      where, "")))
        target = (f"{user}@" if user else "") + address + (f":{port}" if port else "")
    groups = _groups(raw, where)
    drives_raw = raw.get("drives")
    if not isinstance(drives_raw, list) or not drives_raw:
        raise InventoryError(f"{where}: no drives: add [[hosts.{name}.drives]] with path or "
                             "by_id")
    host = Host(name, local, target, options)
    return host, [_drive(path, host, n, d, groups) for n, d in enumerate(drives_raw, 1)]


def _drive(path: Path, host: Host, n: int, raw, host_groups: tuple[str, ...]) -> Drive:
    where = f"{path}: host '{host.name}', drive {n}"
    if not isinstance(raw, dict):
        raise InventoryError(f"{where}: must be a table ([[hosts.{host.name}.drives]])")
    _keys(raw, DRIVE_KEYS, where)
    if ("path" in raw) == ("by_id" in raw):
        raise InventoryError(f"{where}: give exactly one of path or by_id")
    device = (_typed(raw, "path", str, where, "") if "path" in raw else
              "/dev/disk/by-id/" + _typed(raw, "by_id", str, where, ""))
    if not host.local:
        if not device.startswith("/dev/"):
            raise InventoryError(f"{where}: path {device!r}: a drive of a remote host is a "
                                 "device node under /dev/ (or by_id)")
        device = f"ssh://{host.target}{device}"
    options = host.options | _options(raw, where, path.parent)
    label = _typed(raw, "label", str, where, None) or _default_label(host, device)
    return Drive(host.name, device, label, tuple(dict.fromkeys(host_groups + _groups(raw, where))),
                 options)


def _default_label(host: Host, device: str) -> str:
    name = device.rstrip("/").rsplit("/", 1)[-1]
    return name if host.local else f"{host.name}:{name}"


def _options(raw: dict, where: str, base: Path) -> dict:
    """spec, purge, round_mode, datasheet of a [defaults], host or drive table, checked."""
    if not isinstance(raw, dict):
        raise InventoryError(f"{where}: must be a table")
    if where.endswith("[defaults]"):
        _keys(raw, OPTION_KEYS, where)
    out: dict = {}
    if "spec" in raw:
        spec = _typed(raw, "spec", str, where, "")
        try:
            load_spec(spec)
        except SpecError as exc:
            raise InventoryError(f"{where}: spec: {exc}") from None
        out["spec"] = spec
    for key in ("purge", "round_mode"):              # the option's choices (its table row)
        allowed = option_table.BY_NAME[key].choices or ()
        if key in raw:
            value = _typed(raw, key, str, where, "")
            if value not in allowed:
                raise InventoryError(f"{where}: {key} = {value!r}: not one of "
                                     f"{', '.join(allowed)}")
            out[key] = value
    if "datasheet" in raw:
        sheet = _relative(base, _typed(raw, "datasheet", str, where, ""))
        if not sheet.is_file():
            raise InventoryError(f"{where}: datasheet {sheet}: no such file")
        out["datasheet"] = str(sheet)
    return out


def _keys(raw: dict, allowed: tuple[str, ...], where: str) -> None:
    if unknown := sorted(set(raw) - set(allowed)):
        raise InventoryError(f"{where}: unknown key(s) {', '.join(unknown)}; known: "
                             f"{', '.join(allowed)}")


def _typed(raw: dict, key: str, kind: type, where: str, default):
    if key not in raw:
        return default
    value = raw[key]
    if not isinstance(value, kind) or (kind is str and not value.strip()):
        raise InventoryError(f"{where}: {key} = {value!r}: must be a "
                             f"{'non-empty string' if kind is str else kind.__name__}")
    return value


def _port(raw: dict, key: str, where: str) -> int | None:
    port = _typed(raw, key, int, where, None)
    if port is not None and not 1 <= port <= 65535:
        raise InventoryError(f"{where}: {key} = {port}: a TCP port is 1..65535")
    return port


def _groups(raw: dict, where: str) -> tuple[str, ...]:
    groups = raw.get("groups", [])
    if not isinstance(groups, list) or not all(isinstance(g, str) and g for g in groups):
        raise InventoryError(f"{where}: groups = {groups!r}: must be a list of names")
    return tuple(groups)


def _relative(base: Path, name: str) -> Path:
    p = Path(name).expanduser()
    return p if p.is_absolute() else (base / p).resolve()


def _unique(path: Path, drives: list[Drive]) -> None:
    """Each label once (item ids, output prefixes), each device once."""
    for attr in ("label", "given"):
        seen: dict[str, Drive] = {}
        for d in drives:
            key = getattr(d, attr)
            if key in seen:
                raise InventoryError(
                    f"{path}: host '{d.host}': {attr} {key!r} is also that of a drive of "
                    f"host '{seen[key].host}': each drive once, each label once")
            seen[key] = d
