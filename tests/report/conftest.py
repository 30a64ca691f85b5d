"""Fixtures the report tests share."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import pytest
from reportlab.platypus import Flowable

from pts.report import document, render
from tests.support import snapshots


@dataclass(frozen=True)
class Rendered:
    """One render() of a run folder, and what the layout it ran was given and found: the
    story laid out (a copy taken before the layout consumed it: the last pass's, the verdict
    naming the page it found) and the PDF layout's headings, markers and page count."""

    pdf: Path
    story: list[Flowable]
    laid: document.Laid


def render_watched(folder: Path, output: Path) -> Rendered:
    """render(folder, output) as a user calls it, watching document.story_for and
    document.layout_pdf on the way: the tests that count the story's flowables or compare
    the PDF's page numbers read them from this one build instead of building the report's
    66 charts again (about 0.4 s of CPU each)."""
    stories: list[list[Flowable]] = []
    laid: list[document.Laid] = []
    story_for, layout_pdf = document.story_for, document.layout_pdf

    def watched_story(view):
        story = story_for(view)
        stories.append(copy.deepcopy(story))
        return story

    def watched_layout(run, *args, **kwargs):
        laid.append(layout_pdf(run, *args, **kwargs))
        return laid[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(document, "story_for", watched_story)
        patch.setattr(document, "layout_pdf", watched_layout)
        pdf = render(folder, output)
    assert len(laid) == 1 and stories, (len(laid), len(stories))
    return Rendered(pdf, stories[-1], laid[0])


@pytest.fixture(scope="session")
def reference_render(tmp_path_factory) -> Rendered:
    """The stored reference run's report.pdf, rendered ONCE per test process for every test
    that only reads it (about 30 s of CPU a render; a report does not depend on where its
    run folder is), with its story and layout (render_watched)."""
    return render_watched(snapshots.REFERENCE_RUN,
                          tmp_path_factory.mktemp("reference") / "report.pdf")


@pytest.fixture(scope="session")
def reference_pdf(reference_render) -> Path:
    return reference_render.pdf
