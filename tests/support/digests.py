"""The outputs whose bytes tests/unit/test_output_digests.py holds, made from a fixed set of
stored runs (issue 48, "behaviour unchanged, shown by bytes").

    python tests/support/digests.py OUT_DIR     # every output written to OUT_DIR, one file
                                                # each, and its SHA-256 printed

Run it at two commits (a worktree of the old one) and `diff -r` the two OUT_DIRs to see what
changed. The runs (built under a temporary REPORTS_DIR by build_runs):
- ref-a1, ref-a2, ref-b1, ref-b2: copies of tests/data/reference-run, model DIGEST_MODEL,
  firmware FW-A / FW-B, every IOPS and MB/s figure of their records scaled by SCALES;
- redone: the reference run with one IOPS point, one HIR state and one XSR group recorded
  twice (as a resumed run redoes them), the second record's figures 10 % higher;
- rwsw: tests/support/synthetic/rwsw_run.build (rwsw-wsat + rwsw-streams).

What is made independent of library versions and of where/when it runs:
- charts: matplotlib draws nothing; each chart's savefig writes a blank image of the same
  size (tight_layout skipped), and what our code put on the figure (describe(): titles,
  axis labels and scales, the ticks it labelled, every line's label and data, scatter
  points, bars, 3-D bars, texts, legend) is kept as text: an output of its own ("...
  charts"). The chart cache (chart_base._DRAWN) is a fresh one meanwhile, so no blank
  chart reaches another test in the process.
- PDFs (report, compare): their text per page (pdftotext -layout), not their bytes;
- HTML: embedded images (data: URIs) cut to their media type;
- the temporary REPORTS_DIR is written <REPORTS>; the index's mtimes and indexing times are
  left out; the report date is fixed by SOURCE_DATE_EPOCH (tests/support/helpers.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path

if __name__ == "__main__":     # run as a script: pts and tests importable (after PYTHONPATH,
    sys.path.append(str(Path(__file__).resolve().parents[2]))   # so a baseline's come first)

from tests.support.helpers import DATA, REPORT_EPOCH  # noqa: E402

REFERENCE = DATA / "reference-run"
DIGEST_MODEL = "Digest NVMe SSD"
# run name -> (firmware, serial, factor on every IOPS / MB/s figure, day of November 2026)
SCALES = {"ref-a1": ("FW-A", "SN-D1", 1.0, 1), "ref-a2": ("FW-A", "SN-D2", 1.02, 2),
          "ref-b1": ("FW-B", "SN-D1", 0.90, 3), "ref-b2": ("FW-B", "SN-D2", 0.93, 4)}
FIGURE_RECORDS = {"point", "fob_point", "sample", "hir_state", "hir_baseline", "xsr_group",
                  "xsr_interval", "operating_point", "wsat_result"}
SKIPPED_COLUMNS = {"run_json_mtime_ns", "ledger_mtime_ns", "indexed_at", "applied_at",
                   "computed_at"}


# ------------------------------------------------------------------------- the runs

def _scaled(rec: dict, factor: float) -> dict:
    if rec.get("type") not in FIGURE_RECORDS or factor == 1.0:
        return rec
    return {k: v * factor if isinstance(v, float) and ("iops" in k or "mbps" in k) else v
            for k, v in rec.items()}


def _edit(folder: Path, info: dict, records: list[dict]) -> None:
    (folder / "run.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    (folder / "ledger.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records),
                                         encoding="utf-8")


def _read(folder: Path) -> tuple[dict, list[dict]]:
    info = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    lines = (folder / "ledger.jsonl").read_text(encoding="utf-8").splitlines()
    return info, [json.loads(x) for x in lines if x.strip()]


def _redo(records: list[dict]) -> list[dict]:
    """Each first record matched below stored again right after the last record of its
    test that precedes test_end, its IOPS / MB/s figures 10 % higher: the record a resumed
    run writes when it redoes a point, a state, a group."""
    picks = [("iops", "point", lambda r: r["round"] == 7 and r["index"] == 5),
             ("hir", "hir_state", lambda r: r["state"] == 2),
             ("xsr", "xsr_group", lambda r: r["group"] == 2)]
    out = list(records)
    for test, kind, match in picks:
        first = next(r for r in out if r.get("test") == test and r["type"] == kind and match(r))
        end = next(i for i, r in enumerate(out) if r.get("test") == test
                   and r["type"] == "test_end")
        again = dict(_scaled(first, 1.1), time=out[end - 1]["time"] + 0.5)
        out.insert(end, again)
    return out


def build_runs(reports: Path) -> dict[str, Path]:
    """The fixed runs under `reports` (see the module's docstring): name -> folder."""
    from tests.support.synthetic import rwsw_run
    folders = {}
    for name, (firmware, serial, factor, day) in SCALES.items():
        folder = reports / f"digest_{serial}" / name
        shutil.copytree(REFERENCE, folder)
        info, records = _read(folder)
        info["run_id"] = f"202611{day:02d}T120000"
        info["started"] = f"2026-11-{day:02d}T12:00:00+00:00"
        info["device"] = dict(info["device"], model=DIGEST_MODEL, serial=serial,
                              firmware=firmware)
        _edit(folder, info, [_scaled(r, factor) for r in records])
        folders[name] = folder
    redone = reports / "model_serial" / "redone"
    shutil.copytree(REFERENCE, redone)
    info, records = _read(redone)
    _edit(redone, info, _redo(records))
    folders["redone"] = redone
    folders["rwsw"] = rwsw_run.build(reports / "rwsw_serial", "rwsw")
    return folders


# ------------------------------------------------------------------------- charts

def _blank_png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    rows = b"".join(b"\0" + b"\xff" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0,
                                                                 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b""))


def _values(seq) -> str:
    import numpy as np
    arr = np.ma.filled(np.ma.asarray(seq, dtype=float), np.nan).ravel()
    return " ".join(repr(round(float(v), 9)) for v in arr)


def _label(artist) -> str:
    """The artist's label as our code gave it; '' for matplotlib's own ('_child0', ...)."""
    label = artist.get_label()
    return "" if label is None or str(label).startswith("_") else str(label)


def describe(fig) -> str:
    """What our code put on a matplotlib figure, as text (see the module's docstring): the
    figure's size and texts; per axes its title, axis labels and scales, the ticks it
    labelled itself, every line's label and data, scatter points, bars (2-D: rectangles;
    3-D: bar3d's arguments), the ticks it placed and labelled (set_xticks, ...: their
    arguments; the ticks matplotlib chooses are its own), texts and legend. Filled areas
    and 3-D polygons are left out: how matplotlib stores them changes with its version."""
    from matplotlib.collections import PathCollection
    from matplotlib.patches import Rectangle
    out = [f"figure {fig.get_size_inches().tolist()}"]
    out += [f"text {t.get_text()!r}" for t in fig.texts]
    for ax in fig.axes:
        z = f" z={ax.get_zlabel()!r}" if hasattr(ax, "get_zlabel") else ""
        out.append(f"axes {ax.get_title()!r} x={ax.get_xlabel()!r} {ax.get_xscale()} "
                   f"y={ax.get_ylabel()!r} {ax.get_yscale()}{z}")
        for line in ax.get_lines():
            out.append(f" line {_label(line)!r} x: {_values(line.get_xdata())}")
            out.append(f"  y: {_values(line.get_ydata())}")
        for c in ax.collections:
            if isinstance(c, PathCollection):
                out.append(f" scatter {_label(c)!r} {_values(c.get_offsets())}")
        for p in ax.patches:
            if isinstance(p, Rectangle):
                out.append(f" bar {_label(p)!r} {_values(p.get_bbox().bounds)}")
        for name, args in getattr(ax, "_digest_calls", ()):
            out.append(f" {name} " + " | ".join(
                repr([str(x) for x in a]) if name.endswith("ticks") and k == 1 else _values(a)
                for k, a in enumerate(args)))
        out += [f" text {t.get_text()!r}" for t in ax.texts]
        legend = ax.get_legend()
        if legend is not None:
            out.append(f" legend {[t.get_text() for t in legend.get_texts()]!r}")
    return "\n".join(out) + "\n"


@contextlib.contextmanager
def charts_described(log: list[str]) -> Iterator[None]:
    """Within: every figure's savefig writes a blank image of its size (PNG) or an empty SVG
    and appends describe(fig) to `log`; tight_layout does nothing (it only places the axes,
    at half of the drawing's CPU); bar3d, set_xticks, set_yticks and set_zticks keep their
    arguments on the axes for describe(); the chart cache is a fresh one. All undone after."""
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from mpl_toolkits.mplot3d.axes3d import Axes3D

    from pts.report.renderers import chart_base

    def kept(cls, name: str, shapes: bool):
        """cls.name that keeps its positional arguments on the axes, in call order."""
        original = getattr(cls, name)

        def call(ax, *args, **kwargs):
            import numpy as np
            if shapes:              # bar3d(x, y, z, dx, dy, dz): scalars as long as x
                got = [np.broadcast_to(np.asarray(a, dtype=float), np.shape(args[0]))
                       for a in args[:6]]
            else:                   # set_xticks(ticks, labels=None, *, minor=False)
                labels = args[1] if len(args) > 1 else kwargs.get("labels")
                got = [args[0], [] if labels is None else labels]
                name_ = f"{name} minor" if kwargs.get("minor") else name
            ax.__dict__.setdefault("_digest_calls", []).append(
                (name if shapes else name_, got))
            return original(ax, *args, **kwargs)
        return original, call

    patched = [(Axes3D, "bar3d", True), (Axes3D, "set_zticks", False),
               (Axes, "set_xticks", False), (Axes, "set_yticks", False)]
    originals = []
    for cls, name, shapes in patched:
        original, call = kept(cls, name, shapes)
        originals.append((cls, name, cls.__dict__.get(name)))
        setattr(cls, name, call)

    def savefig(fig, fname, *args, format=None, dpi=None, **kwargs):
        log.append(describe(fig))
        w, h = (int(round(x * (dpi or fig.dpi))) for x in fig.get_size_inches())
        if format == "svg":
            fname.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}"/>')
        else:
            fname.write(_blank_png(w, h))

    saved = Figure.savefig, Figure.tight_layout, chart_base._DRAWN, chart_base._drawn_bytes
    Figure.savefig, Figure.tight_layout = savefig, lambda fig, *args, **kwargs: None
    chart_base._DRAWN, chart_base._drawn_bytes = type(saved[2])(), 0
    try:
        yield
    finally:
        (Figure.savefig, Figure.tight_layout, chart_base._DRAWN,
         chart_base._drawn_bytes) = saved
        for cls, name, own in originals:
            if own is None:           # inherited: the subclass's attribute goes again
                delattr(cls, name)
            else:
                setattr(cls, name, own)


# ------------------------------------------------------------------------- the outputs

def pdf_text(pdf: Path) -> bytes:
    """The PDF's text, page by page (pdftotext -layout; pages separated by form feeds)."""
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True,
                          capture_output=True).stdout


DATA_URI = re.compile(rb"data:([a-z]+/[a-z0-9.+-]+);base64,[A-Za-z0-9+/=]*")


def _command(argv: list[str]) -> bytes:
    """`python -m pts ARGV` in this process: its stdout (exit 0 required)."""
    from pts.cli.main import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    if code != 0:
        raise RuntimeError(f"python -m pts {' '.join(argv)}: exit {code}")
    return out.getvalue().encode()


def index_rows(db_file: Path) -> bytes:
    """Every table of the SQLite index, each row as JSON, in a stable order (sorted); the
    mtimes and indexing times left out (SKIPPED_COLUMNS)."""
    conn = sqlite3.connect(db_file)
    try:
        out = []
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for table in tables:
            cur = conn.execute(f"SELECT * FROM {table}")      # noqa: S608 (names from sqlite)
            cols = [d[0] for d in cur.description]
            rows = sorted(json.dumps({c: v for c, v in zip(cols, row, strict=True)
                                      if c not in SKIPPED_COLUMNS}, sort_keys=True)
                          for row in cur)
            out.append(f"table {table} {[c for c in cols if c not in SKIPPED_COLUMNS]}")
            out += rows
        return ("\n".join(out) + "\n").encode()
    finally:
        conn.close()


def outputs(work: Path) -> dict[str, bytes]:
    """Every output, by name (the names of test_output_digests.DIGESTS), made under a folder
    of /tmp whose path has the same length wherever it runs, and normalised (see the module's
    docstring); `work` is where the caller wants it, unused but for its existence. The
    compare PDF prints its runs' folders and wraps a long path across lines: under pytest's
    tmp_path (one length alone, another under xdist's popen-gwN) the same output read
    differently, so the folder's path length is fixed, then the path replaced."""
    work.mkdir(parents=True, exist_ok=True)
    fixed = Path(tempfile.mkdtemp(prefix="pts-digests-", dir="/tmp"))  # 8 random characters
    try:
        return _outputs(fixed)
    finally:
        shutil.rmtree(fixed, ignore_errors=True)


def _outputs(work: Path) -> dict[str, bytes]:
    from pts.report.document import build_html, build_pdf
    from pts.stored.data import load_run

    if os.environ.get("SOURCE_DATE_EPOCH") != REPORT_EPOCH:
        raise RuntimeError(f"SOURCE_DATE_EPOCH must be {REPORT_EPOCH} (the reports' date, "
                           "tests/support/helpers.py), as tests/conftest.py sets it")
    reports = work / "reports"
    runs = build_runs(reports)
    out: dict[str, bytes] = {}
    charts: list[str] = []
    with charts_described(charts):
        view = load_run(runs["ref-a1"])
        pdf = work / "report.pdf"
        pdf.write_bytes(build_pdf(view))
        out["report pdf text"] = pdf_text(pdf)
        out["report html"] = DATA_URI.sub(rb"data:\1;base64,", build_html(view).encode())
        out["report charts"] = "\n".join(charts).encode()
        charts.clear()
        _command(["compare", str(runs["ref-a1"]), str(runs["ref-b1"]), "-o", str(work / "cmp")])
        out["compare pdf text"] = pdf_text(work / "cmp" / "compare.pdf")
        out["compare csv"] = (work / "cmp" / "compare.csv").read_bytes()
        out["compare charts"] = "\n".join(charts).encode()
    for run in ("ref-a1", "redone", "rwsw"):
        for kind in ("csv", "json", "ocptv"):
            out[f"{run} export {kind}"] = _command(["export", f"--{kind}", str(runs[run])])
    _command(["index", str(reports)])
    out["index rows"] = index_rows(reports / "index.sqlite")
    ab = ["history", DIGEST_MODEL, "--firmware", "FW-A", "--firmware", "FW-B",
          "--index", str(reports)]
    out["history text"] = _command(ab)
    out["history json"] = _command(ab + ["--json"])
    where = str(reports).encode()
    return {name: data.replace(where, b"<REPORTS>") for name, data in out.items()}


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_name(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") + ".txt"


def write(made: dict[str, bytes], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in made.items():
        (folder / file_name(name)).write_bytes(data)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    os.environ["SOURCE_DATE_EPOCH"] = REPORT_EPOCH
    with tempfile.TemporaryDirectory() as tmp:
        made = outputs(Path(tmp))
    write(made, Path(argv[0]))
    for name, data in made.items():
        print(f'    ("{name}", "{digest(data)}"),')
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
