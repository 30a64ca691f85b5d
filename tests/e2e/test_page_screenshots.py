"""Screenshot baselines of the dashboard's pages (issue 22): the runs list, the run page, the
compare page and every page of the HTML report, of the stored reference run served by
`python -m pts serve`, shot in Debian's headless Chromium and compared with the stored
baselines (tests/data/screen-baselines/) as the PDF's pages are with theirs. How they are
shot and reduced: tests/support/screens.py.

On a mismatch the test writes the actual shot and a diff image and names them, and says
whether this Chromium is the one the baselines were made with (their builds.toml). A change
you meant: look at them, then refresh the baselines on purpose (tests.support.screens.REFRESH) and
commit them.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support import screens, snapshots
from tests.support.helpers import serving
from tests.support.pages import console_errors

pytestmark = [pytest.mark.slow, pytest.mark.needs("chromium", "chromedriver", "selenium")]

BASELINES = snapshots.index(screens.SCREENS)


@pytest.fixture(scope="module")
def shots(browser, tmp_path_factory):
    out = tmp_path_factory.mktemp("screens")
    with screens.reports_folder() as reports, serving(reports) as base:
        console_errors(browser)
        taken = screens.capture(browser, base)
        errors = console_errors(browser)
    return out, taken, errors, screens.builds(browser)


def test_baselines_are_stored():
    assert BASELINES, f"no screenshot baselines in {screens.SCREENS}: {screens.REFRESH}"
    stored = sorted(p.name for p in screens.SCREENS.glob("*.png"))
    assert sorted(BASELINES) == stored, \
        f"{screens.SCREENS}: {snapshots.INDEX} does not list its images; {screens.REFRESH}"


def test_the_same_shots_as_the_baselines(shots):
    _, taken, errors, _ = shots
    assert not errors, errors
    assert list(taken) == BASELINES, (
        f"other pages shot than the baselines, or in another order.\n  only now: "
        f"{sorted(set(taken) - set(BASELINES))}\n  only in the baselines: "
        f"{sorted(set(BASELINES) - set(taken))}\nIf that is meant: {screens.REFRESH}")


@pytest.mark.parametrize("name", BASELINES, ids=[n.removesuffix(".png") for n in BASELINES])
def test_shot_matches_its_baseline(shots, name):
    out, taken, _, this = shots
    shot = taken.get(name)
    if shot is None:
        pytest.fail(f"{name} was not shot (see test_the_same_shots_as_the_baselines)")
    expected = snapshots.load(screens.SCREENS / name)
    score = snapshots.difference(shot, expected)
    if score > snapshots.TOLERANCE:
        got, diff = out / f"actual-{name}", out / f"diff-{name}"
        snapshots.save(shot, got)
        snapshots.diff_image(shot, expected, diff)
        size = "" if shot.shape == expected.shape else \
            f" (size {shot.shape} instead of {expected.shape})"
        pytest.fail(snapshots.explain(
            f"{name} differs from its baseline by {score:.4f} (tolerance "
            f"{snapshots.TOLERANCE}){size}.\n  baseline: {screens.SCREENS / name}\n"
            f"  actual:   {got}\n  diff:     {diff}\nLook at them; if the change is "
            f"meant, refresh the baselines: {screens.REFRESH}",
            snapshots.recorded_builds(screens.SCREENS), this, screens.REFRESH))


def test_a_shot_sees_a_line_of_text_moved():
    """The measure on a shot: identical 0; the run page with its content 6 screen pixels
    (2 reduced) lower, as a taller heading would push it, scores above the tolerance."""
    page = snapshots.load(screens.SCREENS / "run-page.png")
    assert snapshots.difference(page, page) == 0.0
    moved = np.full_like(page, snapshots.LEVELS - 1)
    moved[2:, :] = page[:-2, :]
    assert snapshots.difference(moved, page) > snapshots.TOLERANCE
