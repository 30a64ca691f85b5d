"""The dashboard's history page (issue 41 §2): linked from the runs list's model cells, the
same answer as `python -m pts history` (pts.index.history), and without a results index a
page that says how to make one; in a real browser (Debian's headless Chromium through
Selenium, tests/support/screens.py) over `python -m pts serve` on the synthetic lab
(tests/support/synthetic/history_lab.py): the verdicts, means, standard deviations and runs
shown checked against numbers computed here by hand."""

from __future__ import annotations

import math
import re
from html import unescape

import pytest
from scipy.stats import t as student_t
from starlette.testclient import TestClient

from pts.cli.main import main
from pts.config import margins as margins_mod
from pts.index import history_gate
from pts.serve.app import create_app
from tests.support.helpers import serving
from tests.support.pages import console_errors
from tests.support.synthetic.history_lab import LAB_X, LAB_Y, LABEL, X_VALUES, M, R, W, indexed_lab

BROWSER = (pytest.mark.slow, pytest.mark.needs("chromium", "chromedriver", "selenium"))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The synthetic lab's REPORTS_DIR (history_lab.py), indexed: built once per module."""
    return indexed_lab(tmp_path_factory.mktemp("lab") / "reports")


def test_without_an_index_the_page_says_how_to_make_one(tmp_path):
    with TestClient(create_app([tmp_path])) as client:
        page = client.get("/history", params={"model": LAB_X})
    assert page.status_code == 200
    assert "read from the results index" in page.text and "python -m pts index" in page.text


def test_a_model_not_indexed_is_named(lab):
    with TestClient(create_app([lab])) as client:
        page = client.get("/history", params={"model": "NoSuchModel"})
        bad = client.get("/history", params={"model": LAB_X, "level": "7"})
    assert page.status_code == 400 and "no run of model &#39;NoSuchModel&#39;" in page.text
    assert bad.status_code == 200 and "level &#39;7&#39;: give a number between 0 and 1" in bad.text


def hand(values: list[float]) -> tuple[str, str, str]:
    """A side's mean, sample std and n as the page prints them (%.6g, %.4g)."""
    n = len(values)
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else None
    return f"{mean:.6g}", "unknown" if std is None else f"{std:.4g}", str(n)


def hand_gate_w() -> dict[str, str]:
    """LAB_X's RND 4KiB 0/100 in the release gate, as the page prints it, computed here: the
    same five drives ran both firmwares, so paired: d = log(B / A) per drive, gain = mean d,
    se = sd / sqrt 5, df 4; worse than the 5 % margin: t = (gain - log 0.95) / se, its p
    from Student's t; Holm's factor 11 (the second smallest of 12 claims, 2 x 6 cells: the
    smallest is RND 4KiB 100/0's 'better', and 11 x this p is the larger); the change
    exp(gain) - 1 and its 90 % interval exp(gain -/+ t(0.95, 4) se) - 1."""
    a, b = X_VALUES["FW-A"][W], X_VALUES["FW-B"][W]
    d = [math.log(y / x) for x, y in zip(a, b, strict=True)]
    gain = sum(d) / 5
    se = math.sqrt(sum((x - gain) ** 2 for x in d) / 4) / math.sqrt(5)
    p = 11 * student_t.cdf((gain - math.log(0.95)) / se, 4)
    half = student_t.ppf(0.95, 4) * se
    return {"class": "regressed", "method": "paired by drive (5 drives)",
            "change": f"{math.expm1(gain) * 100:+.2f} %",
            "interval": f"{math.expm1(gain - half) * 100:+.2f} % .. "
                        f"{math.expm1(gain + half) * 100:+.2f} %",
            "margin": "5 %", "p-worse": f"{p:.3g}", "p-better": "1", "runs": "-"}


GATE_CELLS = ("class", "method", "change", "interval", "margin", "p-worse", "p-better", "runs")


def gate_rows(html: str) -> dict[str, dict[str, str]]:
    """The release gate's table of a page's HTML: per cell, its columns by class."""
    table = html.split('id="gate-cells"', 1)[1].split("</table>", 1)[0]
    rows = {}
    for key, row in re.findall(r'<tr data-key="([^"]+)">(.*?)</tr>', table, re.S):
        found = dict(re.findall(r'<td class="([\w-]+)[^"]*"[^>]*>([^<]*)</td>', row))
        rows[key] = {k: found[k].strip() for k in GATE_CELLS}
    return rows


def test_the_release_gate_on_the_page_against_hand_computed_numbers(lab):
    """Starlette's TestClient (fast tier); the browser test below checks the same shown."""
    with TestClient(create_app([lab])) as client:
        x = client.get("/history", params={"model": LAB_X})          # FW-A against FW-B
        y = client.get("/history", params=[("model", LAB_Y), ("firmware", "FW-A"),
                                           ("firmware", "FW-B")])
        wide = client.get("/history", params={"model": LAB_X, "level": "0.6"})
    rows = gate_rows(x.text)
    assert rows[f"iops {LABEL[W]}"] == hand_gate_w()
    assert {k: r["class"] for k, r in rows.items()} == {
        f"iops {LABEL[W]}": "regressed", f"iops {LABEL[R]}": "improved",
        f"iops {LABEL[M]}": "equivalent", "iops RND 1024KiB 0/100": "equivalent",
        "iops RND 1024KiB 65/35": "equivalent", "iops RND 1024KiB 100/0": "equivalent"}
    assert f'id="gate-answer" class="gate-regressed" data-status="1">regressed (exit 1): ' \
        f"regressed beyond its margin: iops {LABEL[W]}</p>" in x.text
    one = gate_rows(y.text)
    assert {r["class"] for r in one.values()} == {"inconclusive"} and len(one) == 6
    assert {r["runs"] for r in one.values()} == {"1"}
    assert 'data-status="3">inconclusive (exit 3): inconclusive: 6 cell(s) not decided' \
        in y.text and "add 1 run(s) a side</p>" in y.text
    # the page's level is the history's (0 to 1); the gate's must be below 0.5: said
    assert "release gate: the level must be between 0 and 0.5, not 0.6" in wide.text
    assert 'id="gate-cells"' not in wide.text


def test_metrics_give_each_models_gate_for_an_alert_rule(lab):
    """/metrics: per model, its two newest firmwares' gate status and cells per class (the
    numbers of the test above: LAB_X regressed, LAB_Y inconclusive)."""
    with TestClient(create_app([lab])) as client:
        text = client.get("/metrics").text
    from prometheus_client.parser import text_string_to_metric_families
    found = {(s.name, s.labels["model"], s.labels["firmware_a"], s.labels["firmware_b"],
              s.labels.get("class", "")): s.value
             for family in text_string_to_metric_families(text) for s in family.samples
             if s.name.startswith("pts_release_gate")}
    x, y = (LAB_X, "FW-A", "FW-B"), (LAB_Y, "FW-A", "FW-B")
    assert found == {
        ("pts_release_gate_status", *x, ""): 1, ("pts_release_gate_status", *y, ""): 3,
        ("pts_release_gate_cells", *x, "equivalent"): 4,
        ("pts_release_gate_cells", *x, "improved"): 1,
        ("pts_release_gate_cells", *x, "regressed"): 1,
        ("pts_release_gate_cells", *y, "inconclusive"): 6}


def gate_metrics(text: str) -> dict:
    from prometheus_client.parser import text_string_to_metric_families
    return {(s.name, s.labels["model"], s.labels.get("class", "")): s.value
            for family in text_string_to_metric_families(text) for s in family.samples
            if s.name.startswith("pts_release_gate")}


def test_metrics_and_the_page_read_the_gates_answer_the_index_keeps(lab, monkeypatch):
    """/metrics and the history page take the gate's answer from the index
    (pts.index.gate_store), not worked out at the request: with the gate's code made to fail,
    both still show it; a question the index does not keep (another level) is worked out,
    and the page says which."""
    with TestClient(create_app([lab])) as client:
        before = gate_metrics(client.get("/metrics").text)
        monkeypatch.setattr(history_gate, "pair_gate", lambda *a, **k: 1 / 0)
        assert gate_metrics(client.get("/metrics").text) == before
        x = client.get("/history", params={"model": LAB_X})
        assert 'data-status="1">regressed (exit 1)' in x.text
        assert '<span id="gate-source">kept in the results index (worked out ' in x.text
        assert gate_rows(x.text)[f"iops {LABEL[W]}"] == hand_gate_w()
        monkeypatch.undo()
        other = client.get("/history", params={"model": LAB_X, "level": "0.04"})
    assert before[("pts_release_gate_status", LAB_X, "")] == 1
    assert '<span id="gate-source">worked out for this page' in other.text
    assert 'data-status="1">regressed (exit 1)' in other.text


@pytest.mark.parametrize("percent, status, w_class", [(7, 1, "regressed"),
                                                     (12, 0, "equivalent")])
def test_serve_margins_decide_the_page_and_metrics(lab, tmp_path, percent, status, w_class):
    """`pts serve --margins FILE`: LAB_X's RND 4KiB 0/100 falls about 10 % (90 % interval
    -11.0 .. -9.0 %): beyond a 7 % margin (regressed, 1), within a 12 % one (0); the index
    keeps these margins' answers apart from the built-in ones'."""
    path = tmp_path / "margins.toml"
    path.write_text(f"[metric]\niops = {percent}\n")
    app = create_app([lab], margins=margins_mod.load(path))
    with TestClient(app) as client:
        assert app.state.indexed.wait(1)
        found = gate_metrics(client.get("/metrics").text)
        x = client.get("/history", params={"model": LAB_X})
    assert found[("pts_release_gate_status", LAB_X, "")] == status
    assert gate_rows(x.text)[f"iops {LABEL[W]}"]["class"] == w_class
    assert gate_rows(x.text)[f"iops {LABEL[W]}"]["margin"] == f"{percent} %"
    assert "the margins of `pts serve --margins` (sha256:" in unescape(x.text)
    assert "kept in the results index" in x.text


@pytest.mark.parametrize("text, says", [
    (None, "cannot read margins file"),
    ("[metric]\niops = 0.01\n", "line 2"),
    ("nonsense = 3\n", "unknown key(s) nonsense"),
])
def test_serve_refuses_a_bad_margins_file_before_starting(lab, tmp_path, capsys, text, says):
    path = tmp_path / "margins.toml"
    if text is not None:
        path.write_text(text)
    assert main(["serve", str(lab), "--port", "0", "--margins", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("serve: --margins: ") and says in err and str(path) in err
    assert "leave --margins out for the built-in margins" in err


VERDICT_ROWS = """return Array.from(document.querySelectorAll('#verdicts tr[data-key]')).map(
  r => [r.dataset.key].concat(Array.from(r.querySelectorAll('td.mean, td.std, td.n, td.verdict'))
  .map(c => c.textContent.trim())));"""


GATE_ROWS = """return Array.from(document.querySelectorAll('#gate-cells tr[data-key]')).map(
  r => [r.dataset.key].concat(['class', 'method', 'change', 'interval', 'margin', 'p-worse',
  'p-better', 'runs'].map(k => r.querySelector('td.' + k).textContent.trim())));"""


@pytest.fixture(scope="module")
def browser():
    from tests.support.screens import chromium
    driver = chromium()
    driver.set_window_size(1280, 900)
    try:
        yield driver
    finally:
        driver.quit()


def loaded_after(browser, click) -> None:
    """click(), then wait for the page it loads: the page it left gone (its <html> stale)
    and the new one complete. Read at once, the table may still be the page the click left
    (CI of stop 56: B against A read as A against B, 'regressed' where 'improved' was due)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait
    left = browser.find_element(By.TAG_NAME, "html")
    click()
    wait = WebDriverWait(browser, 60)           # a limit that only stops a hang
    wait.until(expected_conditions.staleness_of(left))
    wait.until(lambda b: b.execute_script("return document.readyState") == "complete")


def shown(browser) -> dict[str, list[str]]:
    """The page's A/B table by cell label: A mean, std, n, B mean, std, n, verdict."""
    return {row[0].removeprefix("iops "): row[1:]
            for row in browser.execute_script(VERDICT_ROWS)}


@BROWSER[0]
@BROWSER[1]
def test_the_history_page_shows_the_verdicts_computed_by_hand(lab, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    with serving(lab) as base:
        console_errors(browser)
        browser.get(base + "/")
        link = next(a for a in browser.find_elements(By.CSS_SELECTOR, "#runs a.history")
                    if a.text == LAB_X)
        loaded_after(browser, link.click)     # its two newest firmwares: FW-A against FW-B
        assert browser.find_element(By.ID, "model").text == LAB_X
        rows = shown(browser)
        expected = {W: "regressed", R: "improved", M: "no change beyond noise"}
        for cell, verdict in expected.items():
            a, b = X_VALUES["FW-A"][cell], X_VALUES["FW-B"][cell]
            assert rows[LABEL[cell]] == [*hand(a), *hand(b), verdict], cell
        assert len(browser.find_elements(By.CSS_SELECTOR, "#history-runs tr[data-number]")) == 10
        # the release gate: the pair's answer and each cell's class, as computed by hand
        assert browser.find_element(By.ID, "gate-answer").text == \
            f"regressed (exit 1): regressed beyond its margin: iops {LABEL[W]}"
        gate = {row[0]: dict(zip(GATE_CELLS, row[1:], strict=True))
                for row in browser.execute_script(GATE_ROWS)}
        assert gate[f"iops {LABEL[W]}"] == hand_gate_w()
        assert [gate[f"iops {LABEL[c]}"]["class"] for c in (R, M)] == ["improved", "equivalent"]
        section = browser.find_element(By.CSS_SELECTOR, f"section[data-key$='{LABEL[W]}']")
        assert "Run #6 starts a new level: 40000 → 36000" in section.text
        assert len(section.find_elements(By.CSS_SELECTOR, "svg circle")) == 10
        # B against A, picked in the form: the verdicts turn round
        pickers = browser.find_elements(By.CSS_SELECTOR, "#firmwares select")
        Select(pickers[0]).select_by_visible_text("FW-B")
        Select(pickers[1]).select_by_visible_text("FW-A")
        loaded_after(browser, browser.find_element(By.CSS_SELECTOR, "#firmwares button").click)
        turned = shown(browser)
        assert turned[LABEL[W]][-1] == "improved"
        assert turned[LABEL[R]][-1] == "regressed"
        # one run a side: the spread is unknown, the means are shown
        browser.get(base + "/history?model=" + LAB_Y.replace(" ", "+"))
        one = shown(browser)
        assert one[LABEL[W]] == ["40000", "unknown", "1", "30000", "unknown",
                                                 "1", "spread unknown"]
        assert {r[-1] for r in one.values()} == {"spread unknown"}
        errors = console_errors(browser)
    assert not errors, errors
