"""The dashboard's authentication middleware (issue 31 §7): HTTP basic auth against the
credentials of pts/serve/access.py, enforced by Starlette's AuthenticationMiddleware on
every request of the app, /metrics included (docs/dashboard-auth.md)."""

from __future__ import annotations

import base64
import binascii

from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    SimpleUser,
)
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection
from starlette.responses import PlainTextResponse, Response

from pts.serve.access import LOG, REALM, Credentials


class BasicAuth(AuthenticationBackend):
    def __init__(self, credentials: Credentials):
        self.credentials = credentials

    async def authenticate(self, conn: HTTPConnection):
        header = conn.headers.get("authorization")
        if header is None:
            raise AuthenticationError("no credentials")
        scheme, _, value = header.partition(" ")
        try:
            user, colon, password = base64.b64decode(value.strip(), validate=True).partition(b":")
        except (binascii.Error, ValueError):
            raise AuthenticationError("malformed Authorization header") from None
        if scheme.lower() != "basic" or not colon:
            raise AuthenticationError("malformed Authorization header")
        if not self.credentials.check(user, password):
            raise AuthenticationError("wrong credentials")
        return AuthCredentials(["dashboard"]), SimpleUser(user.decode(errors="replace"))


def refused(conn: HTTPConnection, exc: Exception) -> Response:
    """401 with the challenge that makes a browser ask; logged with the client and the path,
    never what was sent (a password typed into the user field included)."""
    client = f"{conn.client.host}:{conn.client.port}" if conn.client else "?"
    LOG.warning("refused %s %s from %s: %s", conn.scope.get("method", "WEBSOCKET"),
                conn.url.path, client, exc)
    return PlainTextResponse("401 Unauthorized: this dashboard needs a user and password\n",
                             status_code=401, headers={
                                 "WWW-Authenticate": f'Basic realm="{REALM}", charset="UTF-8"'})


def middleware(credentials: Credentials | None) -> list[Middleware]:
    """The app's middleware: every request authenticated when there are credentials."""
    if credentials is None:
        return []
    return [Middleware(AuthenticationMiddleware, backend=BasicAuth(credentials),
                       on_error=refused)]
