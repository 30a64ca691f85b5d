"""Page snapshots: the report of the stored reference run (tests/data/reference-run/), page by
page, against stored baseline images (tests/data/page-baselines/), so that a layout
regression is seen, not guessed. How pages are compared: tests/support/snapshots.py.

On a mismatch the test writes the actual page and a diff image and names them, and says
whether this poppler is the one the baselines were made with (their builds.toml). A change
you meant: look at the pages, then refresh the baselines on purpose
(tests.support.snapshots.REFRESH)
and commit them.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support import snapshots

pytestmark = pytest.mark.needs("pdftoppm", "pdftotext")

BASELINE_FILES = [snapshots.BASELINES / name for name in snapshots.index()]


@pytest.fixture(scope="module")
def rendered(reference_pdf):
    return reference_pdf.parent, {page.name: page for page in snapshots.pages(reference_pdf)}


def test_reference_run_and_baselines_are_stored():
    assert (snapshots.REFERENCE_RUN / "ledger.jsonl").is_file(), \
        f"no reference run folder: make it with python {snapshots.DATA}/make_reference_run.py"
    assert BASELINE_FILES, f"no page baselines in {snapshots.BASELINES}: {snapshots.REFRESH}"


def test_same_pages_as_the_baselines(rendered):
    """Pages added, removed, retitled or moved; each page's content: the test below."""
    _, actual = rendered
    expected = [p.name for p in BASELINE_FILES]
    stored = sorted(p.name for p in snapshots.BASELINES.glob("*.png"))
    assert sorted(expected) == stored, \
        f"{snapshots.BASELINES}: {snapshots.INDEX} does not list its images; {snapshots.REFRESH}"
    assert list(actual) == expected, (
        f"the report of the reference run has other pages than the baselines, or in another "
        f"order.\n  only in the report: {sorted(set(actual) - set(expected))}\n  only in the "
        f"baselines: {sorted(set(expected) - set(actual))}\nIf that is meant, refresh the "
        f"baselines: {snapshots.REFRESH}")


@pytest.mark.parametrize("baseline", BASELINE_FILES, ids=[p.stem for p in BASELINE_FILES])
def test_page_matches_its_baseline(rendered, baseline):
    out, actual = rendered
    page = actual.get(baseline.name)
    if page is None:
        pytest.fail(f"page {baseline.stem} is not in the report any more (see "
                    f"test_same_pages_as_the_baselines); if meant: {snapshots.REFRESH}")
    expected = snapshots.load(baseline)
    score = snapshots.difference(page.levels, expected)
    if score > snapshots.TOLERANCE:
        got, diff = out / f"actual-{baseline.name}", out / f"diff-{baseline.name}"
        snapshots.save(page.levels, got)
        snapshots.diff_image(page.levels, expected, diff)
        size = "" if page.levels.shape == expected.shape else \
            f" (size {page.levels.shape} instead of {expected.shape})"
        pytest.fail(snapshots.explain(
            f"page {page.number} '{page.title}' differs from its baseline by {score:.4f} "
            f"(tolerance {snapshots.TOLERANCE}){size}.\n  baseline: {baseline}\n  actual:   "
            f"{got}\n  diff:     {diff}\nLook at them; if the change is meant, refresh the "
            f"baselines: {snapshots.REFRESH}", snapshots.recorded_builds(snapshots.BASELINES),
            snapshots.poppler_build(), snapshots.REFRESH))


def test_difference_sees_a_moved_block_and_ignores_none():
    """The measure itself: identical pages score 0; a block moved by a few pixels scores
    above the tolerance."""
    page = snapshots.load(BASELINE_FILES[0])
    assert snapshots.difference(page, page) == 0.0
    moved = np.full_like(page, snapshots.LEVELS - 1)
    moved[4:, :] = page[:-4, :]
    assert snapshots.difference(moved, page) > snapshots.TOLERANCE


# ----------------------------------------------------------------------------- builds

FAILURE = "run-page.png differs from its baseline by 0.0031 (tolerance 0.002)."
SCREEN_REFRESH = "python tests/data/make_screen_baselines.py"


def test_a_failure_on_another_build_names_both_builds():
    made = {"chromium": "156.0.8078.79", "chromedriver": "156.0.8078.79"}
    this = {"chromium": "156.0.8078.108", "chromedriver": "156.0.8078.108"}
    said = snapshots.explain(FAILURE, made, this, SCREEN_REFRESH)
    assert said == (
        f"{FAILURE}\nbaseline made with Chromium 156.0.8078.79, this is Chromium "
        "156.0.8078.108; baseline made with ChromeDriver 156.0.8078.79, this is ChromeDriver "
        "156.0.8078.108: if the difference is only text rendering, refresh the baselines "
        f"with {SCREEN_REFRESH} and commit them.")
    # Only the tool that differs is named.
    said = snapshots.explain(FAILURE, {"poppler": "22.12.0"}, {"poppler": "23.02.0"},
                             snapshots.REFRESH)
    assert said.endswith("\nbaseline made with poppler (pdftoppm) 22.12.0, this is poppler "
                         "(pdftoppm) 23.02.0: if the difference is only text rendering, "
                         f"refresh the baselines with {snapshots.REFRESH} and commit them.")


def test_a_failure_on_the_baselines_own_build_is_the_report_s():
    """Same build: nothing about builds is added (the layout changed, not the renderer)."""
    same = {"chromium": "156.0.8078.108", "chromedriver": "156.0.8078.108"}
    assert snapshots.explain(FAILURE, same, dict(same), SCREEN_REFRESH) == FAILURE


def test_baselines_without_a_build_record_say_so():
    said = snapshots.explain(FAILURE, {}, {"poppler": "22.12.0"}, snapshots.REFRESH)
    assert said.startswith(FAILURE + "\nThe baselines do not record the builds")
    assert "poppler (pdftoppm) 22.12.0" in said and snapshots.REFRESH in said


def test_the_baselines_record_their_builds_and_the_versions_read_as_such(tmp_path):
    """Both baselines folders carry builds.toml (what the make scripts write); the tools'
    banners give their versions."""
    from tests.support import screens
    assert set(snapshots.recorded_builds(snapshots.BASELINES)) == {"poppler"}
    assert set(snapshots.recorded_builds(screens.SCREENS)) == {"chromium", "chromedriver"}
    written = snapshots.write_builds(tmp_path, {"chromium": "1.2.3"}, note="a\nb")
    assert written.name == snapshots.BUILDS
    assert snapshots.recorded_builds(tmp_path) == {"chromium": "1.2.3"}
    assert snapshots.recorded_builds(tmp_path / "none") == {}
    for banner, want in (("Chromium 156.0.8078.108 built on Debian GNU/Linux 12 (bookworm)",
                          "156.0.8078.108"), ("pdftoppm version 22.12.0\nCopyright 2005-2022",
                                              "22.12.0"),
                         ("ChromeDriver 156.0.8078.108 (730482a9-refs/branch-heads/8078@{#2244})",
                          "156.0.8078.108")):
        assert snapshots.version(banner) == want
    assert snapshots.poppler_build()["poppler"][0].isdigit()
