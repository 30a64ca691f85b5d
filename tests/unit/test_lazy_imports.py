"""A run's process loads the PDF and chart libraries only when it renders (issue 24 §3: a
lab controller runs one child per drive, for days; matplotlib and reportlab cost each child
about 36 MiB of resident memory while its rounds run). Measured in a fresh interpreter, as a
child starts."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers import REPO

LOAD = """
import importlib, json, pkgutil, sys
import pts.plugin, pts.procedure.runner, pts.run, pts.serve.background
import pts.testdefs
for m in pkgutil.iter_modules(pts.testdefs.__path__):
    importlib.import_module("pts.testdefs." + m.name)
for m in pkgutil.iter_modules(["pts/suite"]):
    importlib.import_module("pts.suite." + m.name)
print(json.dumps(sorted(n for n in ("matplotlib", "reportlab", "scipy", "uvicorn",
                                    "starlette") if n in sys.modules)))
"""


def test_a_run_loads_no_renderer_until_it_renders():
    out = subprocess.run([sys.executable, "-c", LOAD], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout
    assert json.loads(out) == []


def test_rendering_still_loads_them():
    """The check above can see them: the renderer's own import brings both."""
    probe = LOAD.replace("import pts.testdefs\n", "import pts.testdefs, pts.report.document\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout
    assert json.loads(out) == ["matplotlib", "reportlab"]
