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

Builds: a baseline is a picture of what one poppler (here) or one Chromium
(tests/support/screens.py) drew, and another build can draw the same page's text a pixel
apart. BUILDS in each baselines folder records the builds they were made with (written with
the baselines), and a failed comparison on another build says so (explain): the reader
then knows to look at the diff for text rendering before suspecting the report.

What a snapshot cannot see is a wrong number (a digit changes a few pixels, below TOLERANCE):
every number a page shows is checked against the run's data by a data test, never left to
a snapshot (tests/report/test_page_numbers.py, tests/serve/test_page_numbers.py).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

DATA = Path(__file__).resolve().parents[1] / "data"
REFERENCE_RUN = DATA / "reference-run"
BASELINES = DATA / "page-baselines"
REFRESH = "python tests/data/make_reference_run.py --refresh-baselines"
DPI = 40
LEVELS = 4
TOLERANCE = 0.002      # normalised mean difference above which a page has changed
INDEX = "pages.tsv"    # the baselines in page order: file name, tab, page title
BUILDS = "builds.toml"  # the builds the baselines were made with: {tool: version}
TOOLS = {"poppler": "poppler (pdftoppm)", "chromium": "Chromium",
         "chromedriver": "ChromeDriver"}     # BUILDS' keys as a reader knows them


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
            raise ValueError(f"{path}: not a baseline written by tests/support/snapshots.py (mode "
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
    return [folder / p.name for p in found] + [folder / INDEX,
                                               write_builds(folder, poppler_build())]


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


# ----------------------------------------------------------------------------- builds

def version(text: str) -> str:
    """The first dotted version in a tool's banner ("Chromium 156.0.8078.108 built on ...",
    "pdftoppm version 22.12.0", "ChromeDriver 156.0.8078.108 (730482a9...)")."""
    found = re.search(r"\d+(?:\.\d+)+", text)
    return found.group(0) if found else text.strip()


def poppler_build() -> dict[str, str]:
    """The poppler that rasterises the pages here (pdftoppm -v prints on stderr)."""
    out = subprocess.run(["pdftoppm", "-v"], capture_output=True, text=True)
    return {"poppler": version(out.stderr + out.stdout)}


def write_builds(folder: Path, builds: dict[str, str], note: str = "") -> Path:
    """BUILDS in `folder`: the builds its baselines were made with (`note`: a comment)."""
    lines = ["# The builds these baselines were made with (tests/support/snapshots.py, BUILDS): a",
             "# comparison on another build that fails says so."]
    lines += [f"# {line}" for line in note.splitlines()]
    lines += [f'{tool} = "{build}"' for tool, build in builds.items()]
    path = folder / BUILDS
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def recorded_builds(folder: Path) -> dict[str, str]:
    """What BUILDS in `folder` records ({} when there is none)."""
    path = folder / BUILDS
    if not path.is_file():
        return {}
    return {k: str(v) for k, v in tomllib.loads(path.read_text(encoding="utf-8")).items()}


def explain(failure: str, made_with: dict[str, str], this: dict[str, str],
            refresh: str) -> str:
    """A failed comparison's message, with what the builds have to do with it: for each tool
    whose build here is not the baselines' one, "baseline made with X, this is Y"; when
    the baselines do not record their builds, that it cannot be told."""
    if not made_with:
        return (f"{failure}\nThe baselines do not record the builds they were made with "
                f"({BUILDS}): this build ({_builds(this)}) may draw text a pixel apart. "
                f"Refresh them with {refresh} and commit them (it records the builds).")
    notes = [f"baseline made with {TOOLS.get(tool, tool)} {made_with[tool]}, this is "
             f"{TOOLS.get(tool, tool)} {build}"
             for tool, build in this.items() if tool in made_with and made_with[tool] != build]
    if not notes:
        return failure
    return (f"{failure}\n{'; '.join(notes)}: if the difference is only text rendering, "
            f"refresh the baselines with {refresh} and commit them.")


def _builds(builds: dict[str, str]) -> str:
    return ", ".join(f"{TOOLS.get(t, t)} {b}" for t, b in builds.items()) or "unknown"
