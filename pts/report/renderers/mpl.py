"""matplotlib's pieces the charts draw with, imported when the first chart is drawn.

Why: a report without a chart (a run stopped at its purge or before its first round, the
commonest error report) then renders without loading matplotlib at all: the import alone
costs about 10 s of every such run in the QEMU guest's TCG (0.3 s natively)."""

from __future__ import annotations

import functools
from types import SimpleNamespace


@functools.cache
def mpl() -> SimpleNamespace:
    import matplotlib
    import matplotlib.lines
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import PathCollection
    from matplotlib.figure import Figure
    from matplotlib.path import Path
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    return SimpleNamespace(
        rc_context=matplotlib.rc_context, Line2D=matplotlib.lines.Line2D,
        FigureCanvasAgg=FigureCanvasAgg, PathCollection=PathCollection, Figure=Figure,
        Path=Path, FuncFormatter=FuncFormatter, LogLocator=LogLocator,
        MaxNLocator=MaxNLocator, NullFormatter=NullFormatter)
