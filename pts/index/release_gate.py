"""The firmware release gate (issue 50): firmware A's runs against B's, cell by cell, each
cell against a practical margin, and one answer for the pair with an exit status a pipeline
can use. Pure: the runs' values in, the answer out (pts.index.history gathers the values;
the better direction and the margin of each figure are inputs, not looked up here).

Per cell, on the log of the values (a ratio B/A is a difference of logs; the figures are
positive), g = the gain of B over A (log B - log A, its sign turned for a lower-is-better
figure), against the worse bound lo and the better bound hi of the margin m:
higher is better: lo = log(1 - m), hi = log(1 + m) (B/A below 1 - m is worse than the
margin); lower is better: lo = -log(1 + m), hi = -log(1 - m) (B/A above 1 + m is worse).
A cell whose values are not all positive is judged on B - A over A's mean instead, lo = -m,
hi = m. Four one-sided t-tests at g's estimate, standard error and degrees of freedom
(two one-sided tests, Schuirmann 1987, at each bound):
- p_worse: H0 g >= lo (not worse than the margin); small: B is worse than its margin.
- p_not_worse: H0 g <= lo; small: B is shown no worse than its margin (non-inferiority).
- p_better: H0 g <= hi; small: B is better than its margin.
- p_not_better: H0 g >= hi; with p_not_worse, the TOST: equivalent when both are small.
Paired by drive when both sides ran on the same drives (the same set of serials, at least
two): the difference per drive (the mean of its runs on each side), a one-sample t-test
(df = drives - 1); so a drive's own level, which differs from sample to sample, cancels.
Otherwise unpaired: Welch's (variances not assumed equal, Welch-Satterthwaite df). One run
on a side (unpaired) or one drive in common with single runs: the spread is unknown and the
cell is inconclusive, never "no change". Every value the same on both sides: the gain is
known exactly, each test's p is 0 or 1.

The error rates, over the whole comparison (docs/history.md "The release gate"):
- a "regressed" or "improved" claim: Holm's step-down over the 2 x cells one-sided p-values
  (p_worse and p_better of every cell): the chance of any false claim in a comparison is at
  most the level, whatever the number of cells (family-wise; Holm 1979);
- the pass (exit 0) claims every cell with a better direction no worse than its margin: an
  intersection-union test (Berger 1982): each cell's p_not_worse at the level, and the
  chance of passing a pair of which any cell is truly worse than its margin is at most the
  level, with no correction (a pass needs every cell shown, so the cells add no chances).
Classes, first that holds: regressed (Holm p_worse <= level), improved (Holm p_better <=
level), equivalent (TOST p <= level), not worse (p_not_worse <= level: no worse, perhaps
better by more than the margin), else inconclusive. A figure without a better direction:
changed (either Holm p), equivalent or inconclusive, and it does not decide the gate (the
gate asks whether anything got worse). A cell without a value on a side: not on both sides.

The answer: 1 (EXIT_REGRESSED) when a cell regressed (named); else 3 (EXIT_INCONCLUSIVE)
when a cell with a better direction is inconclusive or missing (the runs to add named, from
pts.index.gate_plan); else 0 (EXIT_PASS). Bad input (no cell, a level or margin out of
range, a value not finite) raises GateInputError: the caller answers 2 (EXIT_BAD_INPUT).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import special

from pts.index import gate_plan

EXIT_PASS, EXIT_REGRESSED, EXIT_BAD_INPUT, EXIT_INCONCLUSIVE = 0, 1, 2, 3
LEVEL = 0.05            # per comparison: any false "regressed"; a false pass
POWER = 0.9             # the planner's goal for the runs to add (issue 50: at least 90 %)
REGRESSED, IMPROVED, EQUIVALENT = "regressed", "improved", "equivalent"
NOT_WORSE, INCONCLUSIVE, CHANGED = "not worse", "inconclusive", "changed"
MISSING = "not on both sides"
PASSING = frozenset({EQUIVALENT, NOT_WORSE, IMPROVED})
PAIRED, UNPAIRED, EXACT = "paired by drive", "unpaired (Welch)", "no spread"
CORRECTION = ("Holm's step-down over every cell's two one-sided claims (family-wise); the "
              "pass an intersection-union test (every cell no worse than its margin)")


class GateInputError(ValueError):
    """The comparison cannot be made; the message names the problem and the fix."""


@dataclass(frozen=True)
class Sample:
    """One run's value of a cell, with the drive (serial) that ran it."""

    serial: str
    value: float


@dataclass(frozen=True)
class Cell:
    """A figure's values on each side; better: 1 higher, -1 lower, 0 no direction; margin:
    the relative change that matters (0.05: 5 %)."""

    name: str
    a: tuple[Sample, ...]
    b: tuple[Sample, ...]
    better: int
    margin: float


@dataclass(frozen=True)
class Estimate:
    """The gain of B over A (log or relative scale), its standard error and df (se None:
    spread unknown; se 0: no spread), the bounds, and the spread and size the planner uses."""

    gain: float
    se: float | None
    df: float
    lo: float
    hi: float
    method: str
    n: int                  # runs a side (the smaller), or drives in common when paired
    sd: float | None        # per-run spread (pooled), or of the per-drive differences
    change: float           # B / A - 1 (of the geometric means; relative scale: of the means)
    way: int                # 1 or -1: gain = way x (B - A) on the scale
    log: bool               # the log scale (else B - A over A's mean)

    @property
    def paired(self) -> bool:
        return self.method.startswith(PAIRED)


@dataclass(frozen=True)
class CellAnswer:
    name: str
    verdict: str
    method: str
    n_a: int
    n_b: int
    change: float | None            # B / A - 1
    low: float | None               # the change's 1 - 2 x level interval (the TOST's)
    high: float | None
    margin: float
    better: int
    p_worse: float | None           # Holm-adjusted
    p_better: float | None          # Holm-adjusted
    p_not_worse: float | None
    p_equivalent: float | None      # the TOST's: max of the two inner one-sided p-values
    runs_a_side: int | None         # inconclusive: runs a side that would decide it
    why: str


@dataclass(frozen=True)
class GateAnswer:
    status: int                     # EXIT_PASS, EXIT_REGRESSED or EXIT_INCONCLUSIVE
    answer: str                     # "pass", "regressed", "inconclusive"
    level: float
    power: float
    correction: str
    cells: tuple[CellAnswer, ...]
    regressed: tuple[str, ...]
    inconclusive: tuple[str, ...]
    # (cell, runs more a side: the planner's at the observed spread, or, spread unknown, the
    # runs to reach 2 a side; None: no number up to gate_plan.N_MAX decides it)
    runs_to_add: tuple[tuple[str, int | None], ...]

    @property
    def summary(self) -> str:
        if self.status == EXIT_REGRESSED:
            return f"regressed beyond its margin: {', '.join(self.regressed)}"
        if self.status == EXIT_INCONCLUSIVE:
            missing = [a.name for a in self.cells if a.better and a.verdict == MISSING]
            out = f"inconclusive: {len(self.inconclusive)} cell(s) not decided " \
                  f"({', '.join(self.inconclusive)})"
            if self.runs_to_add:
                out += f"; {plan_text(self.runs_to_add)}"
            if missing:
                out += f"; no value on a side: {', '.join(missing)} (a run that gives it)"
            return out
        return f"pass: every cell no worse than its margin (level {self.level:g})"


def plan_text(runs: Sequence[tuple[str, int | None]]) -> str:
    """The runs to add, in words: the most any decidable cell needs, and the cells no number
    of runs decides (their change about their margin)."""
    known = [n for _, n in runs if n is not None]
    never = [c for c, n in runs if n is None]
    parts = [f"add {max(known)} run(s) a side"] if known else []
    if never:
        parts.append(f"no number of runs up to {gate_plan.N_MAX} a side decides "
                     f"{', '.join(never)} (its change is about its margin)")
    return "; ".join(parts)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (reject where adjusted <= level), in input order."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    out, running, m = [0.0] * len(pvalues), 0.0, len(pvalues)
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def _check(cells: Sequence[Cell], level: float, power: float) -> None:
    if not 0 < level < 0.5:
        raise GateInputError(f"the level must be between 0 and 0.5, not {level:g} (e.g. 0.05)")
    if not 0 < power < 1:
        raise GateInputError(f"the power must be between 0 and 1, not {power:g} (e.g. 0.9)")
    if not cells:
        raise GateInputError("no cell to compare: the two firmwares share no figure")
    for c in cells:
        if not 0 < c.margin < 1:
            raise GateInputError(f"{c.name}: margin {c.margin:g} is not a fraction between 0 "
                                 "and 1 (5 % is 0.05)")
        if c.better not in (-1, 0, 1):
            raise GateInputError(f"{c.name}: better must be 1, -1 or 0, not {c.better!r}")
        bad = [s.value for s in c.a + c.b if not math.isfinite(s.value)]
        if bad:
            raise GateInputError(f"{c.name}: a value is not finite ({bad[0]}): the figures "
                                 "must be numbers")


def estimate(c: Cell) -> Estimate:
    """The gain of B over A in cell c, paired or unpaired (the module's docstring)."""
    values = [s.value for s in c.a + c.b]
    way, log = c.better or 1, all(v > 0 for v in values)
    if log:
        lo, hi = (math.log(1 - c.margin), math.log(1 + c.margin)) if way > 0 \
            else (-math.log(1 + c.margin), -math.log(1 - c.margin))
        scale = 1.0
    else:
        lo, hi = -c.margin, c.margin
        scale = abs(statistics.fmean(s.value for s in c.a)) or max(map(abs, values)) or 1.0
    ya: dict[str, list[float]] = {}
    yb: dict[str, list[float]] = {}
    for side, found in ((c.a, ya), (c.b, yb)):
        for s in side:
            found.setdefault(s.serial, []).append(math.log(s.value) if log else s.value / scale)
    flat_a = [y for ys in ya.values() for y in ys]
    flat_b = [y for ys in yb.values() for y in ys]
    diff = statistics.fmean(flat_b) - statistics.fmean(flat_a)
    change = math.expm1(diff) if log else diff
    common = {"lo": lo, "hi": hi, "change": change, "way": way, "log": log}
    if set(ya) == set(yb) and len(ya) >= 2:
        d = [statistics.fmean(yb[k]) - statistics.fmean(ya[k]) for k in sorted(ya)]
        sd = statistics.stdev(d)
        return Estimate(way * statistics.fmean(d), sd / math.sqrt(len(d)), len(d) - 1,
                        method=f"{PAIRED} ({len(d)} drives)" if sd else EXACT, n=len(d),
                        sd=sd, **common)
    na, nb = len(flat_a), len(flat_b)
    if na < 2 or nb < 2:
        return Estimate(way * diff, None, 0, method=UNPAIRED, n=min(na, nb), sd=None, **common)
    va, vb = statistics.variance(flat_a), statistics.variance(flat_b)
    se2 = va / na + vb / nb
    if se2 == 0:
        return Estimate(way * diff, 0.0, math.inf, method=EXACT, n=min(na, nb), sd=0.0,
                        **common)
    df = se2 ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    return Estimate(way * diff, math.sqrt(se2), df, method=UNPAIRED, n=min(na, nb),
                    sd=math.sqrt((va + vb) / 2), **common)


def one_sided(e: Estimate) -> tuple[float, float, float, float]:
    """(p_worse, p_not_worse, p_better, p_not_better) of an estimate with a known spread."""
    if e.se == 0:
        return (float(e.gain >= e.lo), float(e.gain <= e.lo), float(e.gain <= e.hi),
                float(e.gain >= e.hi))
    # Student's t distribution function (scipy.special.stdtr: stats.t.cdf's own, without
    # its per-call checks, which cost 80 % of a 136-cell comparison's time)
    t_lo, t_hi = (e.gain - e.lo) / e.se, (e.gain - e.hi) / e.se
    return (float(special.stdtr(e.df, t_lo)), float(special.stdtr(e.df, -t_lo)),
            float(special.stdtr(e.df, -t_hi)), float(special.stdtr(e.df, t_hi)))


def interval(e: Estimate, level: float) -> tuple[float, float]:
    """The change B / A - 1 at the ends of the gain's 1 - 2 x level interval (the TOST's)."""
    half = 0.0 if e.se == 0 else float(special.stdtrit(e.df, 1 - level)) * e.se
    ends = [e.way * (e.gain + k * half) for k in (-1, 1)]
    return tuple(sorted(math.expm1(x) if e.log else x for x in ends))


def _answer(c: Cell, e: Estimate | None, p: tuple | None, worse: float | None,
            better: float | None, level: float, power: float, family: int) -> CellAnswer:
    base = {"name": c.name, "n_a": len(c.a), "n_b": len(c.b), "margin": c.margin,
            "better": c.better}
    if e is None:
        side = "A" if not c.a else "B"
        return CellAnswer(**base, verdict=MISSING, method="-", change=None, low=None,
                          high=None, p_worse=None, p_better=None, p_not_worse=None,
                          p_equivalent=None, runs_a_side=None,
                          why=f"no value on {side}: a run of {side} that gives it")
    if p is None:
        return CellAnswer(**base, verdict=INCONCLUSIVE, method=e.method, change=e.change,
                          low=None, high=None, p_worse=None, p_better=None,
                          p_not_worse=None, p_equivalent=None, runs_a_side=2 - e.n,
                          why="one run on a side: its run-to-run spread is unknown; run at "
                              "least 2 a side, then the planner can say how many decide it")
    low, high = interval(e, level)
    p_eq = max(p[1], p[3])
    m = f"{c.margin * 100:g}%"          # as given: a file's 2.9 % is not "3%"
    if worse <= level and c.better:
        verdict, why = REGRESSED, f"worse than its {m} margin, Holm p = {worse:.3g}"
    elif better <= level and c.better:
        verdict, why = IMPROVED, f"better than its {m} margin, Holm p = {better:.3g}"
    elif min(worse, better) <= level:
        verdict, why = CHANGED, f"beyond its {m} margin, Holm p = " \
                                f"{min(worse, better):.3g}; no better direction"
    elif p_eq <= level:
        verdict, why = EQUIVALENT, f"within its {m} margin, TOST p = {p_eq:.3g}"
    elif p[1] <= level and c.better:
        verdict, why = NOT_WORSE, f"no worse than its {m} margin, p = {p[1]:.3g}"
    else:
        verdict, why = INCONCLUSIVE, f"neither within nor beyond its {m} margin " \
                                     f"at level {level:g} (TOST p = {p_eq:.3g})"
    runs = None
    if verdict == INCONCLUSIVE and e.sd:
        # the observed gain taken as the true one: runs a side for the nearer decision
        if e.gain > e.lo:
            runs = gate_plan.runs_a_side(e.gain - e.lo, e.sd, level, power, e.paired)
        else:
            runs = gate_plan.runs_a_side(e.lo - e.gain, e.sd, level / family, power,
                                         e.paired)
        runs = None if runs is None else max(runs - e.n, 1)
        why += "; " + (f"about {runs} more run(s) a side decide it at the observed spread"
                       if runs is not None else "its change is about its margin: no number of "
                       f"runs up to {gate_plan.N_MAX} decides it")
    return CellAnswer(**base, verdict=verdict, method=e.method, change=e.change, low=low,
                      high=high, p_worse=worse, p_better=better, p_not_worse=p[1],
                      p_equivalent=p_eq, runs_a_side=runs, why=why)


def gate(cells: Sequence[Cell], level: float = LEVEL, power: float = POWER) -> GateAnswer:
    """The release gate's answer for firmware A against B over `cells`."""
    _check(cells, level, power)
    present = [c for c in cells if c.a and c.b]
    found = {c.name: estimate(c) for c in present}
    raw = {name: one_sided(e) for name, e in found.items() if e.se is not None}
    names = list(raw)
    adjusted = holm([raw[n][0] for n in names] + [raw[n][2] for n in names])
    worse = dict(zip(names, adjusted[:len(names)], strict=True))
    better = dict(zip(names, adjusted[len(names):], strict=True))
    answers = [_answer(c, found.get(c.name), raw.get(c.name), worse.get(c.name),
                       better.get(c.name), level, power, len(names)) for c in cells]
    deciding = [a for a in answers if a.better]
    regressed = tuple(a.name for a in deciding if a.verdict == REGRESSED)
    open_ = tuple(a.name for a in deciding if a.verdict in (INCONCLUSIVE, MISSING))
    runs = tuple((a.name, a.runs_a_side) for a in deciding if a.verdict == INCONCLUSIVE)
    if regressed:
        status, word = EXIT_REGRESSED, "regressed"
    elif open_:
        status, word = EXIT_INCONCLUSIVE, "inconclusive"
    else:
        status, word = EXIT_PASS, "pass"
    return GateAnswer(status, word, level, power, CORRECTION, tuple(answers), regressed,
                      open_, runs)
