"""A run's process loads the PDF and chart libraries only when it renders (issue 24 §3: a
lab controller runs one child per drive, for days; matplotlib and reportlab cost each child
about 36 MiB of resident memory while its rounds run). Measured in a fresh interpreter, as a
child starts."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.helpers import REPO, pdf_text
from tests.support.synthetic.runfactory import RunFolder, iops_parameters, run_json

LOAD = """
import importlib, json, pkgutil, sys
import pts.session.plugin, pts.procedure.runner, pts.run, pts.serve.background
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


def loaded(code: str) -> list[str]:
    probe = LOAD.replace("import pts.testdefs\n", f"import pts.testdefs\n{code}\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


def test_rendering_still_loads_them():
    """The check above can see them: the renderer's own import brings reportlab, the first
    chart drawn matplotlib (pts.report.renderers.mpl)."""
    assert loaded("import pts.report.document") == ["reportlab"]
    assert loaded("import pts.report.document\nfrom pts.report.renderers import charts\n"
                  "charts.convergence([1, 2], {'a': [1.0, 2.0]}, None, 'IOPS', 't')") == [
        "matplotlib", "reportlab"]


def test_a_report_without_a_chart_renders_without_matplotlib(tmp_path):
    """A run stopped at its purge (no round: no chart) renders its PDF without loading
    matplotlib (about 10 s of every such run in the QEMU guest's TCG)."""
    run = RunFolder(tmp_path / "run", run_json())
    run.record("test_start", test="iops", title="IOPS", clause="7",
               parameters=iops_parameters(max_rounds=25))
    run.record("purge", test="iops", method="security-erase", command=None, ok=False,
               seconds=None, deviation=False, steps=[], verification="",
               error="the drive does not support the ATA Security feature set")
    run.record("test_end", test="iops", status="error", rounds=None, steady_round=None,
               window=None, message="purge failed: the drive does not support the ATA "
                                    "Security feature set")
    code = ("from pts.report.cli import render\n"
            f"render({str(run.path)!r})")
    assert loaded(code) == ["reportlab"]
    assert (run.path / "report.pdf").stat().st_size > 0
    assert "the drive does not support the ATA Security" in " ".join(
        pdf_text(run.path / "report.pdf").split())
