"""Fixtures shared by the e2e tests that drive a real browser (issue 22): Debian's headless
Chromium through chromium-driver, by path (nothing is downloaded)."""

from __future__ import annotations

import pytest

from tests.screens import chromium


@pytest.fixture(scope="module")
def browser():
    driver = chromium()
    try:
        yield driver
    finally:
        driver.quit()
