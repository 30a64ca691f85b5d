"""Fixtures the report tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from pts.report import render
from tests.support import snapshots


@pytest.fixture(scope="session")
def reference_pdf(tmp_path_factory) -> Path:
    """The stored reference run's report.pdf, rendered ONCE for every test that only reads it
    (about 11 s a render; a report does not depend on where its run folder is)."""
    return render(snapshots.REFERENCE_RUN, tmp_path_factory.mktemp("reference") / "report.pdf")
