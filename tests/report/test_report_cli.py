"""`python -m pts report RUN_DIR [--output PATH]`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pts.cli.main import main
from pts.report import render
from pts.tools import atomic
from tests.support.helpers import REPO
from tests.support.synthetic.runfactory import build_run


def test_cli_prints_the_pdf_path_and_exits_0(tmp_path):
    folder = build_run(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "pts", "report", str(folder)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    pdf = Path(proc.stdout.strip())
    assert pdf == (folder / "report.pdf").resolve()
    # Another process, the same bytes: nothing in the PDF depends on process state.
    assert pdf.read_bytes() == render(folder, tmp_path / "again.pdf").read_bytes()


def test_cli_output_option(tmp_path, capsys):
    folder = build_run(tmp_path)
    target = tmp_path / "elsewhere.pdf"
    assert main(["report", str(folder), "--output", str(target)]) == 0
    assert capsys.readouterr().out.strip() == str(target.resolve())
    assert target.read_bytes().startswith(b"%PDF-")
    assert not (folder / "report.pdf").exists()
    # the umask read, not set (setting it changes it for every thread of this worker)
    assert target.stat().st_mode & 0o777 == 0o666 & ~atomic.umask()   # not mkstemp's 0600


def test_cli_missing_dir_exits_2(tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert "missing" in err and "does not exist" in err


def test_cli_no_run_json_exits_2(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "no run.json" in capsys.readouterr().err


def test_cli_corrupt_ledger_exits_2_naming_the_line(tmp_path, capsys):
    folder = build_run(tmp_path)
    ledger = folder / "ledger.jsonl"
    lines = ledger.read_text().splitlines()
    lines[4] = "{garbage"
    ledger.write_text("\n".join(lines) + "\n")
    assert main(["report", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "ledger.jsonl line 5" in err
    assert not (folder / "report.pdf").exists()
