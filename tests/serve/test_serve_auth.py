"""The dashboard beyond this machine (issue 31 §7, pts.serve.auth): listening beyond loopback
needs an --auth-file of user:password lines (chmod 600); then every request, to every route
of the app (enumerated here, so a new route cannot escape) and to none, /metrics included,
needs them: none or wrong -> 401, logged with the client and path but never the
credentials; right -> the page. Loopback without a file stays open; with one it is enforced.
The same for `pytest --serve HOST:PORT --serve-auth-file` and `python -m pts demo`."""

from __future__ import annotations

import base64
import logging
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

import httpx
import pytest
import uvicorn
from starlette.routing import Route
from starlette.testclient import TestClient

from pts.cli.main import main
from pts.serve import access, background
from pts.serve.app import create_app
from tests.support.helpers import REPO, free_port
from tests.support.serve_runs import make

A, B = "Alpha_SN-A/20261101T000000", "Beta_SN-B/20261102T000000"
PASSWORD = "correct-horse-battery"
# A value for each path parameter of the app's routes, and a query the compare routes need;
# all of them lead to a page that answers 200 with the right credentials.
SAMPLES = {"id": A, "name": "run.json", "kind": "csv"}
QUERY = f"?run={A}&run={B}"
NO_CONTENT = "/favicon.ico"       # 204 by design (pages without an icon of their own)


def basic(user: str, password: str) -> dict:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def token(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


RIGHT = basic("lab", PASSWORD)
RIGHT_TOKEN = token(f"lab:{PASSWORD}".encode())
MALFORMED, WRONG_ONES = "malformed Authorization header", "wrong credentials"
# Every edge of pts.serve.auth.BasicAuth, each with the reason it must be refused for (the
# log says it): a refusal for another reason would hide a check that no longer holds (with
# right credentials under another scheme, only the scheme check refuses).
WRONG = [
    (basic("lab", PASSWORD + "x"), WRONG_ONES),
    (basic("lab", PASSWORD[:-1]), WRONG_ONES),                   # a prefix of the password
    (basic("other", PASSWORD), WRONG_ONES),
    (basic("Lab", PASSWORD), WRONG_ONES),                        # user names are exact
    (basic("lab", ""), WRONG_ONES),                              # empty password
    (basic("", PASSWORD), WRONG_ONES),                           # empty user
    (basic("", ""), WRONG_ONES),                                 # ":" alone
    (basic(PASSWORD, "lab"), WRONG_ONES),                        # the two swapped
    ({"Authorization": "Bearer " + RIGHT_TOKEN}, MALFORMED),     # right pair, wrong scheme
    ({"Authorization": "Digest " + RIGHT_TOKEN}, MALFORMED),
    ({"Authorization": RIGHT_TOKEN}, MALFORMED),                 # no scheme
    ({"Authorization": "Bearer " + PASSWORD}, MALFORMED),
    ({"Authorization": "Basic !!notbase64"}, MALFORMED),
    ({"Authorization": "Basic " + RIGHT_TOKEN[:-2]}, MALFORMED),  # its padding cut
    ({"Authorization": f"Basic {RIGHT_TOKEN} extra"}, MALFORMED),
    ({"Authorization": "Basic " + token(f"lab{PASSWORD}".encode())}, MALFORMED),  # no colon
    ({"Authorization": "Basic"}, MALFORMED),                     # scheme, no credentials
    ({"Authorization": "Basic "}, MALFORMED),
    ({"Authorization": ""}, MALFORMED),                          # the header, empty
]
# The scheme is case-insensitive (RFC 7235 §2.1) and a space more is still one token.
ALSO_RIGHT = [{"Authorization": f"{scheme} {RIGHT_TOKEN}"}
              for scheme in ("basic", "BASIC", "bAsIc", "Basic ")]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("auth") / "reports"
    make(root, A, model="Alpha", serial="SN-A")
    make(root, B, model="Beta", serial="SN-B", curve=[0.9] * 7)
    return root


def write_auth(path, text=f"# the lab\n\nlab:{PASSWORD}\n", mode=0o600):
    path.write_text(text)
    path.chmod(mode)
    return path


@pytest.fixture(scope="module")
def auth_file(tmp_path_factory):
    return write_auth(tmp_path_factory.mktemp("secret") / "dashboard.auth")


@pytest.fixture(scope="module")
def client(root, auth_file):
    app = create_app([root], credentials=access.load(auth_file, "--auth-file"))
    with TestClient(app) as c:
        yield c


def urls() -> list[str]:
    """Every route of the app with its path parameters filled in, and a path no route has."""
    app = create_app([])
    out = []
    for route in app.routes:
        assert isinstance(route, Route), f"{route!r}: not a Route; teach this test its kind"
        unknown = set(route.param_convertors) - set(SAMPLES)
        assert not unknown, f"{route.path}: give SAMPLES a value for {unknown}"
        out.append(route.path_format.format(**SAMPLES) + QUERY)
    assert len(out) >= 10                    # the app's routes as of issue 31
    return out + ["/no-such-page"]


@pytest.mark.parametrize("url", urls())
def test_every_route_refuses_without_the_right_credentials(client, url, caplog):
    cases = [({}, "no credentials"), *WRONG]
    for headers, _ in cases:
        with caplog.at_level(logging.WARNING, logger="pts.serve.auth"):
            r = client.get(url, headers=headers)
        assert r.status_code == 401, (url, headers, r.status_code)
        assert r.headers["www-authenticate"].startswith('Basic realm="snia-pts dashboard"')
        assert "Alpha" not in r.text and "SN-A" not in r.text
    path = url.split("?", 1)[0]
    assert [r.getMessage() for r in caplog.records] == [
        f"refused GET {path} from testclient:50000: {why}" for _, why in cases]


@pytest.mark.parametrize("url", urls()[:-1])
def test_every_route_answers_with_the_right_credentials(client, url):
    r = client.get(url, headers=RIGHT)
    want = 204 if url.startswith(NO_CONTENT + "?") else 200
    assert r.status_code == want, (url, r.status_code, r.text[:300])


@pytest.mark.parametrize("headers", ALSO_RIGHT)
def test_the_scheme_in_any_case_and_a_space_more_are_accepted(client, headers, caplog):
    with caplog.at_level(logging.WARNING, logger="pts.serve.auth"):
        r = client.get("/metrics", headers=headers)
    assert r.status_code == 200 and "pts_run_folders" in r.text, (headers, r.status_code)
    assert caplog.records == []


def test_a_user_name_beyond_ascii_is_its_utf_8(root, tmp_path):
    """The challenge says charset="UTF-8" (RFC 7617 §2.1): a browser sends a non-ASCII user
    or password in UTF-8; the same name in Latin-1 is another name."""
    f = write_auth(tmp_path / "a", f"läb:{PASSWORD}ü\n")
    with TestClient(create_app([root], credentials=access.load(f, "--auth-file"))) as c:
        ok = {"Authorization": "Basic " + token(f"läb:{PASSWORD}ü".encode())}
        assert c.get("/metrics", headers=ok).status_code == 200
        latin = {"Authorization": "Basic " + token(f"läb:{PASSWORD}ü".encode("latin-1"))}
        assert c.get("/metrics", headers=latin).status_code == 401
        assert c.get("/metrics", headers=RIGHT).status_code == 401      # "lab" is not "läb"


def test_metrics_are_under_the_same_credentials(client):
    assert client.get("/metrics").status_code == 401
    r = client.get("/metrics", headers=RIGHT)
    assert r.status_code == 200 and 'pts_run_state{model="Alpha",serial="SN-A"' in r.text


def test_refused_requests_are_logged_without_the_credentials(client, caplog):
    typed = basic(PASSWORD, PASSWORD)            # a password typed into the user field
    with caplog.at_level(logging.WARNING, logger="pts.serve.auth"):
        client.get("/metrics")
        client.get(f"/runs/{A}/files/ledger.jsonl", headers=typed)
        client.get("/", headers=RIGHT)
    assert [r.getMessage() for r in caplog.records] == [
        "refused GET /metrics from testclient:50000: no credentials",
        f"refused GET /runs/{A}/files/ledger.jsonl from testclient:50000: wrong credentials"]
    assert PASSWORD not in caplog.text
    assert typed["Authorization"].split()[1] not in caplog.text


def test_loopback_without_a_file_stays_open(root):
    with TestClient(create_app([root])) as c:
        assert c.get("/").status_code == 200 and c.get("/metrics").status_code == 200


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost",
                                  "LocalHost"])
def test_loopback_addresses(host):
    assert access.is_loopback(host)
    assert access.required(host, None, host_option="--host", file_option="--auth-file") is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "10.0.0.1", "fe80::1",
                                  "", "lab-host"])
def test_beyond_loopback_a_file_is_required(host):
    assert not access.is_loopback(host)
    with pytest.raises(access.AuthError, match=r"--host X: the dashboard .* give --auth-file "
                       r"FILE \(lines user:password, chmod 600; docs/dashboard-auth.md\)"):
        access.required(host, None, host_option="--host X", file_option="--auth-file")


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o602, 0o644])
def test_a_file_other_users_may_read_or_write_is_refused(tmp_path, mode):
    f = write_auth(tmp_path / "a", mode=mode)
    with pytest.raises(access.AuthError, match=rf"--auth-file {f}: other users may read or "
                       rf"write it \(mode {mode:o}\); .* chmod 600 {f}"):
        access.load(f, "--auth-file")


NONE = "{opt}: no user:password line; make one with {gen} > {f}; chmod 600 {f}"
NOT_A_PAIR = "{opt} line {n}: not user:password (one user a line; # comments)"
SHORT = "{opt} line {n}: the password has fewer than 12 characters; make one with {gen}"


@pytest.mark.parametrize("text, problem, n", [
    ("", NONE, 0),
    ("# only a comment\n\n   \n", NONE, 0),
    (f"lab {PASSWORD}\n", NOT_A_PAIR, 1),                 # no colon
    (f"# x\n:{PASSWORD}\n", NOT_A_PAIR, 2),               # a password without a user
    ("lab\n", NOT_A_PAIR, 1),                             # a user alone
    ("lab:short\n", SHORT, 1),
    ("lab:\n", SHORT, 1),                                  # a user without a password
    (f"lab:{' ' * 16}\n", SHORT, 1),                       # blanks are no password
    (f"lab:{PASSWORD}\nscraper:\n", SHORT, 2),             # one good line is not enough
])
def test_a_malformed_file_is_refused_naming_the_problem_and_the_fix(tmp_path, text, problem, n):
    f = write_auth(tmp_path / "a", text)
    with pytest.raises(access.AuthError) as err:
        access.load(f, "--auth-file")
    assert str(err.value) == problem.format(opt=f"--auth-file {f}", gen=access.GENERATE,
                                            f=f, n=n)


def test_blanks_around_a_line_are_not_part_of_it(tmp_path):
    f = write_auth(tmp_path / "a", f"   lab:{PASSWORD}  \n\t# a comment\n")
    creds = access.load(f, "--auth-file")
    assert creds.users == ((b"lab", PASSWORD.encode()),)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(access.AuthError, match=rf"--auth-file {tmp_path / 'no'}: cannot read"):
        access.load(tmp_path / "no", "--auth-file")


def test_several_users_and_a_colon_in_a_password(tmp_path):
    f = write_auth(tmp_path / "a", f"lab:{PASSWORD}\nscraper:a:b:c:d:e:f:g:h:i\n")
    creds = access.load(f, "--auth-file")
    assert creds.check(b"scraper", b"a:b:c:d:e:f:g:h:i") and creds.check(b"lab", PASSWORD.encode())
    assert not creds.check(b"lab", b"a:b:c:d:e:f:g:h:i")
    assert not creds.check(b"scraper", PASSWORD.encode())


# --- the command: python -m pts serve ------------------------------------------------------

@pytest.fixture
def started(monkeypatch):
    """uvicorn.run replaced: what `serve` would have served, and where."""
    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append((app, kw)))
    return calls


def test_serve_beyond_loopback_without_a_file_refuses_to_start(root, started, capsys):
    assert main(["serve", str(root), "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("serve: --host 0.0.0.0: the dashboard (run results, device "
                          "serials, raw ledgers) would be open, without credentials, to "
                          "every host that can reach this one"), err
    assert "give --auth-file FILE" in err and started == []


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_serve_with_a_file_enforces_it(root, auth_file, started, host, capsys):
    assert main(["serve", str(root), "--host", host, "--auth-file", str(auth_file)]) == 0
    (app, kw), = started
    assert kw["host"] == host
    assert f"basic auth, 1 user(s) of {auth_file}" in capsys.readouterr().out
    with TestClient(app) as c:
        assert c.get("/metrics").status_code == 401
        assert c.get("/metrics", headers=RIGHT).status_code == 200


def test_serve_on_loopback_without_a_file_serves_as_before(root, started):
    assert main(["serve", str(root)]) == 0
    (app, kw), = started
    assert kw["host"] == "127.0.0.1"
    with TestClient(app) as c:
        assert c.get("/").status_code == 200


def test_serve_refuses_a_world_readable_file(root, tmp_path, started, capsys):
    f = write_auth(tmp_path / "a", mode=0o644)
    assert main(["serve", str(root), "--host", "0.0.0.0", "--auth-file", str(f)]) == 2
    assert f"chmod 600 {f}" in capsys.readouterr().err and started == []


def get(url: str, headers: dict | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_serve_on_all_addresses_over_the_network(root, auth_file):
    """As a user starts it: a real uvicorn on 0.0.0.0, reached over TCP."""
    port = free_port()
    cmd = [sys.executable, "-m", "pts", "serve", str(root), "--host", "0.0.0.0", "--port",
           str(port)]
    refused = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "serve: --host 0.0.0.0: the dashboard" in refused.stderr
    assert "give --auth-file FILE" in refused.stderr
    proc = subprocess.Popen(cmd + ["--auth-file", str(auth_file)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        assert proc.stdout.readline().startswith(f"snia-pts dashboard: http://0.0.0.0:{port}/")
        deadline = time.monotonic() + 30          # until it listens (a 401 is an answer)
        while True:
            try:
                status, _ = get(base + "/metrics")
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.1)
        assert status == 401
        assert get(base + "/", basic("lab", "nope-nope-nope"))[0] == 401
        status, page = get(base + "/", RIGHT)
        assert status == 200 and "Alpha" in page
        status, text = get(base + "/metrics", RIGHT)
        assert status == 200 and "pts_run_folders" in text
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert "refused GET /metrics from 127.0.0.1:" in err and "no credentials" in err
    assert "refused GET / from 127.0.0.1:" in err and "wrong credentials" in err
    assert PASSWORD not in err and "nope-nope-nope" not in err


# --- pytest --serve and python -m pts demo --serve -----------------------------------------

def test_background_beyond_loopback_needs_the_file():
    with pytest.raises(background.ServeError, match=r"--serve 0.0.0.0:\d+: the dashboard .* "
                       r"give --serve-auth-file FILE"):
        background.bind(f"0.0.0.0:{free_port()}")


def test_background_enforces_the_file_and_logs_to_the_terminal(root, auth_file, capfd):
    served = background.start(background.bind(f"127.0.0.1:{free_port()}", str(auth_file)),
                              root)
    try:
        assert httpx.get(served.url + "metrics", timeout=10).status_code == 401
        r = httpx.get(served.url, auth=("lab", PASSWORD), timeout=10)
        assert r.status_code == 200 and "Alpha" in r.text
    finally:
        served.stop()
    err = capfd.readouterr().err             # the terminal: the copy of fd 2 taken at bind
    assert "snia-pts dashboard: refused GET /metrics from 127.0.0.1:" in err, err
    assert access.LOG.handlers == []            # stop() took its handler away


def pytest_run(*args, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "pts/suite/test_iops.py", "-p",
                           "no:cacheprovider", "--device", "/dev/pts-no-such-device",
                           "--destructive", "--reports-dir", str(tmp_path / "r"), *args],
                          cwd=REPO, capture_output=True, text=True, timeout=120)


def test_pytest_serve_beyond_loopback_stops_before_the_device(tmp_path):
    port = free_port()
    p = pytest_run("--serve", f"0.0.0.0:{port}", tmp_path=tmp_path)
    assert p.returncode == 4, p.stdout + p.stderr          # pytest's usage error
    assert f"--serve 0.0.0.0:{port}: the dashboard" in p.stderr
    assert "give --serve-auth-file FILE" in p.stderr
    assert "pts-no-such-device" not in p.stderr and not (tmp_path / "r").exists()


def test_pytest_serve_checks_the_file_before_the_device(tmp_path):
    f = write_auth(tmp_path / "a", mode=0o640)
    p = pytest_run("--serve", f"0.0.0.0:{free_port()}", "--serve-auth-file", str(f),
                   tmp_path=tmp_path)
    assert p.returncode == 4, p.stdout + p.stderr
    assert f"--serve-auth-file {f}: other users may read or write it (mode 640)" in p.stderr
    assert "pts-no-such-device" not in p.stderr and not (tmp_path / "r").exists()


def test_the_demo_passes_the_file_on(tmp_path):
    """`python -m pts demo --serve ... --serve-auth-file F` reaches the run's pytest: a file
    of the wrong mode, given by a relative path, stops it there (before the emulator)."""
    write_auth(tmp_path / "demo.auth", mode=0o644)
    p = subprocess.run([sys.executable, "-m", "pts", "demo", "--reports-dir",
                        str(tmp_path / "r"), "--serve", f"0.0.0.0:{free_port()}",
                        "--serve-auth-file", "demo.auth"],
                       cwd=tmp_path, env=os.environ | {"PYTHONPATH": str(REPO)},
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 4, p.stdout + p.stderr
    assert f"--serve-auth-file {tmp_path / 'demo.auth'}: other users may read" in p.stderr
    assert "demo: no report was written (pytest exit status 4)" in p.stderr
