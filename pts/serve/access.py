"""Who may read the dashboard (issue 31 §7): the credentials file of `user:password` lines,
whether a listening address needs one, and the log of refused requests. Kept apart from
the middleware (pts/serve/auth.py) so that a suite run that only binds --serve loads no
web framework before it serves (tests/unit/test_lazy_imports.py).

Basic auth, not a bearer token: a browser asks for it by itself and then sends it with every
request of the page, the live part's EventSource included (which cannot set a header), and
Prometheus and curl speak it (`basic_auth:`, `curl -u`).

The passwords are stored as given, not hashed: the file must be its owner's alone (chmod 600,
checked), so a hash would guard only a file already kept from other users, while checking a
slow hash on every request (each page, each event-stream reconnect, each scrape) would take
CPU from the host while it measures a drive. Generated passwords (docs) are not reused
elsewhere, which is what a hash would mainly protect."""

from __future__ import annotations

import hmac
import ipaddress
import logging
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

LOG = logging.getLogger("pts.serve.auth")
REALM = "snia-pts dashboard"
MIN_PASSWORD = 12        # characters: a network service, guessable at request speed
GENERATE = "python3 -c \"import secrets; print('lab:' + secrets.token_urlsafe(18))\""
DOC = "docs/dashboard-auth.md"


class AuthError(Exception):
    """The dashboard cannot start with these credentials; the message names the fix."""


@dataclass(frozen=True)
class Credentials:
    users: tuple[tuple[bytes, bytes], ...]      # (user, password), UTF-8
    source: Path

    def check(self, user: bytes, password: bytes) -> bool:
        # Every line is compared, in constant time each, so that neither a name's existence
        # nor a password's matching prefix shows in the time of the answer.
        ok = False
        for u, p in self.users:
            ok |= hmac.compare_digest(u, user) & hmac.compare_digest(p, password)
        return ok


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or localhost: a dashboard only this machine can reach. Any other
    name counts as beyond it (a name may resolve to any address)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def load(path: str | Path, option: str) -> Credentials:
    """The `user:password` lines of `path` (blank lines and # comments skipped), or an
    AuthError naming `option`, the problem and the fix."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AuthError(f"{option} {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})"
                        ) from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        # Refused, not warned: a warning scrolls by, and a file other users can read (or
        # write: add a user) gives them the lab's data. Same rule as ssh's private keys.
        raise AuthError(f"{option} {path}: other users may read or write it (mode "
                        f"{stat.S_IMODE(mode):o}); it holds the dashboard's passwords: "
                        f"chmod 600 {path}")
    users = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        user, colon, password = line.partition(":")
        where = f"{option} {path} line {number}"
        if not colon or not user:
            raise AuthError(f"{where}: not user:password (one user a line; # comments)")
        if len(password) < MIN_PASSWORD:
            raise AuthError(f"{where}: the password has fewer than {MIN_PASSWORD} characters; "
                            f"make one with {GENERATE}")
        users.append((user.encode(), password.encode()))
    if not users:
        raise AuthError(f"{option} {path}: no user:password line; make one with {GENERATE} "
                        f"> {path}; chmod 600 {path}")
    return Credentials(tuple(users), path)


def required(host: str, auth_file: str | Path | None, *, host_option: str,
             file_option: str) -> Credentials | None:
    """The credentials to enforce: those of `auth_file` if given (loopback too); none on
    loopback without one; an AuthError beyond loopback without one."""
    if auth_file is not None:
        return load(auth_file, file_option)
    if is_loopback(host):
        return None
    raise AuthError(f"{host_option}: the dashboard (run results, device serials, raw "
                    "ledgers) would be open, without credentials, to every host that can "
                    f"reach this one; give {file_option} FILE (lines user:password, chmod "
                    f"600; {DOC}), or listen on 127.0.0.1 only")


def log_to(stream: TextIO) -> logging.Handler:
    """Refused requests written to `stream` as they happen (remove_log undoes it)."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s snia-pts dashboard: %(message)s"))
    LOG.addHandler(handler)
    LOG.setLevel(logging.WARNING)
    return handler


def remove_log(handler: logging.Handler) -> None:
    LOG.removeHandler(handler)
    handler.close()
