"""Page snapshots of the report: every page of a PDF as a small grey image, compared with a
stored baseline by a normalised pixel difference (tests/report/test_page_snapshots.py).

A page is rasterised by pdftoppm (poppler-utils) at 40 dpi in grey, then quantised to 4 grey
levels: the baselines stay a few KB each (2-bit PNG), and what is compared is the layout
(text blocks, tables, chart lines and fills), not anti-aliasing shades. The difference of
two pages is the mean absolute difference of their levels, as a fraction of the largest
possible (0 = identical, 1 = black where white). Measured on the reference run: a
re-render 0 (the PDF is byte-identical); another run id and fio version 0.00006, another
snia-pts version in every footer 0.0003; charts 5 % lower 0.022 on chart pages, the header
band 2 mm taller 0.009 .. 0.088. TOLERANCE sits between the two kinds.

Baselines: tests/data/page-baselines/<page title>.png (+ pages.tsv, their page order), made by
`python tests/data/make_reference_run.py --refresh-baselines` (REFRESH below).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

DATA = Path(__file__).resolve().parent / "data"
REFERENCE_RUN = DATA / "reference-run"
BASELINES = DATA / "page-baselines"
REFRESH = "python tests/data/make_reference_run.py --refresh-baselines"
DPI = 40
LEVELS = 4
TOLERANCE = 0.002      # normalised mean difference above which a page has changed
INDEX = "pages.tsv"    # the baselines in page order: file name, tab, page title


@dataclass(frozen=True)
class Page:
    number: int          # 1-based
    title: str           # the header band's "section — subtitle", or "" when it has none
    name: str            # the baseline's file name: a slug of the title (+ "-2", "-3" ...)
    levels: np.ndarray   # uint8, 0 (black) .. LEVELS-1 (white)


def pages(pdf: Path) -> list[Page]:
    """Every page of `pdf`, rasterised and quantised, with its title."""
    titles = _titles(pdf)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["pdftoppm", "-r", str(DPI), "-gray", "-png", str(pdf),
                        f"{tmp}/p"], check=True, capture_output=True)
        files = sorted(Path(tmp).glob("p-*.png"), key=lambda p: int(p.stem.split("-")[1]))
        out, seen = [], {}
        for number, png in enumerate(files, 1):
            with Image.open(png) as im:
                grey = np.asarray(im.convert("L"), dtype=np.float64)
            levels = np.rint(grey * (LEVELS - 1) / 255).astype(np.uint8)
            title = titles[number - 1] if number <= len(titles) else ""
            out.append(Page(number, title, _name(title, seen), levels))
    return out


def _name(title: str, seen: dict[str, int]) -> str:
    """Named by title, not number: a page added elsewhere does not rename the others."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "page"
    seen[slug] = seen.get(slug, 0) + 1
    return f"{slug}.png" if seen[slug] == 1 else f"{slug}-{seen[slug]}.png"


def _titles(pdf: Path) -> list[str]:
    """Per page, the header band's second line ("IOPS — Steady State Convergence")."""
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True,
                          capture_output=True, text=True).stdout
    return [_title(page) for page in text.split("\f")]


def _title(text: str) -> str:
    for line in text.splitlines()[:8]:
        line = line.strip()
        if " — " in line and not line.startswith("SNIA SSS PTS"):
            return re.split(r"\s{2,}", line)[0]   # without the run dates on the right
    return ""


def save(levels: np.ndarray, path: Path) -> None:
    """A quantised page as a 2-bit grey PNG (deterministic bytes for the same pixels)."""
    im = Image.frombytes("P", (levels.shape[1], levels.shape[0]), levels.tobytes())
    im.putpalette([round(v * 255 / (LEVELS - 1)) for v in range(LEVELS) for _ in range(3)])
    im.save(path, "PNG", optimize=True, bits=2)


def load(path: Path) -> np.ndarray:
    """A baseline's levels (its palette indices, as `save` wrote them)."""
    with Image.open(path) as im:
        if im.mode != "P":
            raise ValueError(f"{path}: not a baseline written by tests/snapshots.py (mode "
                             f"{im.mode}); refresh the baselines: {REFRESH}")
        return np.asarray(im, dtype=np.uint8)


def difference(actual: np.ndarray, baseline: np.ndarray) -> float:
    """Normalised mean absolute difference (1.0 when the sizes differ)."""
    if actual.shape != baseline.shape:
        return 1.0
    diff = np.abs(actual.astype(np.int16) - baseline.astype(np.int16))
    return float(diff.mean() / (LEVELS - 1))


def diff_image(actual: np.ndarray, baseline: np.ndarray, path: Path) -> None:
    """Where the pages differ: black on white (the baseline faint underneath)."""
    if actual.shape != baseline.shape:
        return
    changed = actual != baseline
    faint = np.where(baseline < LEVELS - 1, LEVELS - 2, LEVELS - 1).astype(np.uint8)
    save(np.where(changed, 0, faint).astype(np.uint8), path)


def write_baselines(pdf: Path, folder: Path = BASELINES) -> list[Path]:
    """Replace every baseline in `folder` by the pages of `pdf`; INDEX lists them in page
    order with their titles."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    found = pages(pdf)
    for page in found:
        save(page.levels, folder / page.name)
    (folder / INDEX).write_text("".join(f"{p.name}\t{p.title}\n" for p in found),
                                encoding="utf-8")
    return [folder / p.name for p in found] + [folder / INDEX]


def index(folder: Path = BASELINES) -> list[str]:
    """The baselines' names in page order (from INDEX)."""
    path = folder / INDEX
    if not path.is_file():
        return []
    return [line.split("\t")[0] for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def written_line(written: list[Path], folder: Path, what: str, root: Path) -> str:
    """What a make script prints after writing baselines."""
    pngs = [p for p in written if p.suffix == ".png"]
    size = sum(p.stat().st_size for p in pngs)
    return (f"{len(pngs)} {what} ({size / 1024:.0f} KiB) in {folder.relative_to(root)}; look "
            "at them, then commit them")
