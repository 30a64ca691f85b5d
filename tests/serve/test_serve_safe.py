"""`python -m pts serve` serves only files under the folders it was given (issue 22, "Safe
by default"): `..`, URL-encoded traversal, absolute paths, symlinks pointing out and names it
does not know are each a 404 that shows nothing of the file."""

from __future__ import annotations

import html
import os
import re

import pytest
from starlette.testclient import TestClient

from pts.serve.app import create_app
from pts.serve.cli import DEFAULT_HOST, add_arguments
from tests.support.serve_runs import make

RID = "Alpha_SN-A/20261101T000000"
SECRET = "top-secret-outside-the-reports"


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "reports"
    folder = make(root, RID)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (outside / "run.json").write_text(SECRET)
    other = make(tmp_path / "elsewhere", "Out_SN/20261102T000000")   # a run folder outside
    (root / "Link_SN").mkdir()
    (root / "Link_SN" / "20261103T000000").symlink_to(other, target_is_directory=True)
    leak = make(root, "Leak_SN/20261104T000000")
    (leak / "report.pdf").unlink()
    (leak / "report.pdf").symlink_to(outside / "secret.txt")
    (folder / "secret.txt").write_text(SECRET)                       # inside, not a run file
    evil = root / "Evil_SN" / "20261105T000000"
    evil.mkdir(parents=True)
    (evil / "run.json").symlink_to(outside / "run.json")
    return root


ATTEMPTS = [
    "/runs/../../outside/secret.txt",
    "/runs/%2e%2e/%2e%2e/outside/secret.txt",
    "/runs/%2E%2E%2F%2E%2E%2Foutside%2Fsecret.txt",
    f"/runs/{RID}/files/..%2F..%2F..%2Foutside%2Fsecret.txt",
    f"/runs/{RID}/files/%2e%2e%2f%2e%2e%2f%2e%2e%2foutside%2fsecret.txt",
    f"/runs/{RID}/files/secret.txt",                 # a file of the run folder, not served
    f"/runs/{RID}/files/%2Fetc%2Fpasswd",
    "/runs//etc/passwd",
    "/runs/%2Fetc%2Fpasswd",
    f"/runs/{RID}/../../../outside/secret.txt/files/run.json",
    "/runs/Link_SN/20261103T000000",                 # a symlinked run folder leading out
    "/runs/Link_SN/20261103T000000/files/run.json",
    "/runs/Leak_SN/20261104T000000/files/report.pdf",   # a symlinked file leading out
    "/runs/Evil_SN/20261105T000000/files/run.json",
    "/runs/Evil_SN/20261105T000000/report",
    "/runs/nonexistent/files/run.json",
]


@pytest.mark.parametrize("url", ATTEMPTS)
def test_each_way_out_is_a_404(served, url):
    with TestClient(create_app([served])) as client:
        assert client.get(f"/runs/{RID}/files/run.json").status_code == 200   # the way in
        r = client.get(url)
    assert r.status_code == 404, (url, r.status_code)
    assert SECRET not in r.text and "root:" not in r.text


def test_a_run_json_leading_out_is_listed_as_an_error_not_read(served):
    with TestClient(create_app([served])) as client:
        page = client.get("/").text
    assert "Out_SN" not in page and "Link_SN" not in page        # not walked into
    assert "leads out of the served folders: not read" in page and SECRET not in page


def test_binds_to_this_host_unless_told(tmp_path):
    import argparse
    p = argparse.ArgumentParser()
    add_arguments(p)
    args = p.parse_args([])
    assert (args.host, args.port, args.reports_dirs) == (DEFAULT_HOST, 8080, ["reports"])
    assert DEFAULT_HOST == "127.0.0.1"
    assert p.parse_args(["--host", "0.0.0.0", str(tmp_path)]).host == "0.0.0.0"


def test_symlinks_inside_the_served_folder_are_followed(served):
    folder = served / RID
    os.rename(folder / "report.pdf", folder / "real.pdf")
    (folder / "report.pdf").symlink_to(folder / "real.pdf")
    with TestClient(create_app([served])) as client:
        r = client.get(f"/runs/{RID}/files/report.pdf")
    assert r.status_code == 200 and r.content == (folder / "real.pdf").read_bytes()


# What a server hands the app after decoding (uvicorn decodes %2F and keeps `..`): the same
# attempts as ASGI scopes, past any client that would normalise the URL first.
RAW = [
    "/runs/../../outside/secret.txt",
    f"/runs/{RID}/files/../../../outside/secret.txt",
    f"/runs/{RID}/../../../outside/files/secret.txt",
    "/runs//etc/passwd",
    "/runs/Alpha_SN-A/../../outside/files/run.json",
    f"/runs/{RID}/files/..",
]


@pytest.mark.parametrize("path", RAW)
def test_each_raw_way_out_is_a_404(served, path):
    import anyio

    sent = []

    async def call():
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
                 "query_string": b"", "headers": [(b"host", b"testserver")],
                 "server": ("testserver", 80), "client": ("127.0.0.1", 1), "root_path": ""}

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message):
            sent.append(message)

        await create_app([served])(scope, receive, send)

    anyio.run(call)
    assert sent[0]["status"] == 404, path
    assert SECRET.encode() not in b"".join(m.get("body", b"") for m in sent)


def test_odd_folder_names_are_links_that_lead_back_to_them(tmp_path):
    root = tmp_path / "reports"
    # (no "%41" in it: Starlette's TestClient decodes a request's path twice; uvicorn once)
    make(root, "Odd <b> #1?&x=y/run 'a\"")
    with TestClient(create_app([root])) as client:
        page = client.get("/").text
        hrefs = re.findall(r'<a href="(/runs/[^"]*)">', page)
        assert len(hrefs) == 1 and "<b>" not in page
        href = html.unescape(hrefs[0])
        r = client.get(href)
        assert r.status_code == 200
        assert client.get(href + "/files/run.json").content == \
            (root / "Odd <b> #1?&x=y/run 'a\"" / "run.json").read_bytes()
