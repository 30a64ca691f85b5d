"""The dashboard's compare view (issue 22): runs ticked on the runs list, compared by the code
of `python -m pts compare`: the page shows compare.pdf's story (side-by-side tables with the
difference to the first run), and compare.pdf / compare.csv download byte for byte as the
command writes them; its refusals are the command's."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from starlette.testclient import TestClient

from pts.cli.main import main
from pts.compare.data import compare
from pts.compare.pdf import _pct
from pts.serve.app import create_app
from pts.stored import figures, fmt
from tests.support.serve_runs import make

A, B = "Alpha_SN-A/20261101T000000", "Beta_SN-B/20261102T000000"
XSS = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("cmp") / "reports"
    make(root, A, model="Alpha", serial="SN-A")
    make(root, B, model=XSS, serial="SN-B", curve=[0.9] * 7)
    odd = make(root, "Odd_SN-O/20261103T000000", model="Odd", serial="SN-O")
    info = json.loads((odd / "run.json").read_text())
    info["options"]["point_seconds"] = 30            # another setting: refused unless mixed
    (odd / "run.json").write_text(json.dumps(info))
    return root


@pytest.fixture(scope="module")
def client(root):
    with TestClient(create_app([root])) as c:
        yield c


def rows_of(page: str) -> list[list[str]]:
    return [[" ".join(unescape(re.sub(r"<[^>]+>", "", c)).split())
             for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
            for tr in re.findall(r"<tr>(.*?)</tr>", page, re.S)]


def test_the_page_shows_the_side_by_side_tables_of_compare(root, client):
    r = client.get("/compare", params=[("run", A), ("run", B)])
    assert r.status_code == 200, r.text
    c = compare([root / A, root / B])
    shown = rows_of(r.text)
    checked = 0
    for name in c.common:
        for row in c.rows(name):
            want = [row.label, *(fmt.num(v) if v is not None else row.missing_text(i)
                                 for i, v in enumerate(row.values[:1])),
                    fmt.num(row.values[1]) if row.values[1] is not None
                    else row.missing_text(1), _pct(row.diffs[1])]
            assert want in shown, (want, shown[:5])
            checked += 1
    assert checked >= 5
    assert ["Cell", "#1 Alpha SN-A", f"#2 {XSS} SN-B", "diff vs #1"] in shown
    assert XSS not in r.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text


def test_downloads_are_what_the_command_writes(root, client, tmp_path):
    assert main(["compare", str(root / A), str(root / B), "-o", str(tmp_path)]) == 0
    for name in ("compare.csv", "compare.pdf"):
        r = client.get(f"/{name}", params=[("run", A), ("run", B)])
        assert r.status_code == 200
        assert f'filename="{name}"' in r.headers["content-disposition"]
        assert r.content == (tmp_path / name).read_bytes(), name


def test_runs_of_other_settings_are_refused_unless_mixed(client):
    picked = [("run", A), ("run", "Odd_SN-O/20261103T000000")]
    r = client.get("/compare", params=picked)
    assert r.status_code == 400
    assert "the runs differ in spec or settings: option point_seconds: run 1 60, run 2 30" \
        in unescape(r.text)
    assert 'id="allow-mixed"' in r.text
    assert client.get("/compare.csv", params=picked).status_code == 400
    mixed = client.get("/compare", params=picked + [("allow_mixed", "1")])
    assert mixed.status_code == 200 and "point_seconds" in unescape(mixed.text)


@pytest.mark.parametrize("picked, why", [
    ([A], "pick 2 to 8 runs"),
    ([A, "No_SN/20260101T000000"], "No_SN/20260101T000000: cannot be compared"),
    ([A, "../" + B], "cannot be compared"),
])
def test_what_cannot_be_compared_is_named(client, picked, why):
    r = client.get("/compare", params=[("run", p) for p in picked])
    assert r.status_code == 400 and why in unescape(r.text)
    assert client.get("/compare.pdf", params=[("run", p) for p in picked]).status_code == 400


def test_a_test_of_an_unknown_family_is_a_400_naming_it(client, monkeypatch):
    """compare_views raises UnknownFamily for a test the catalogue has no figures for: the
    page says so (the error's message) with a 400, the downloads a 400, not a 500."""
    picked = [("run", A), ("run", B)]
    assert client.get("/compare", params=picked).status_code == 200     # known: compared
    monkeypatch.setattr(figures, "CATALOGUE",
                        tuple(f for f in figures.CATALOGUE if f.family != "iops"))
    r = client.get("/compare", params=picked)
    assert r.status_code == 400
    assert "test 'iops': the figure catalogue has no family 'iops'" in unescape(r.text)
    assert client.get("/compare.csv", params=picked).status_code == 400


def test_the_runs_list_ticks_runs_into_the_compare_form(client):
    page = client.get("/").text
    assert '<form id="compare" method="get" action="/compare">' in page
    for rid in (A, B):
        assert f'name="run" value="{rid}" form="compare"' in page
    assert client.get("/compare.txt").status_code == 404
