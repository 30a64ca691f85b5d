"""How each option of the run is checked and declared: the checks (text -> the value the
run uses, or SettingsError naming the option and the fix) and the deviation sentences the
rows of pts.config.option_table name. Worded for the console and the report."""

from __future__ import annotations

from typing import Any

from pts.config import power_option
from pts.config.ocp_id_classes import FORM_FACTORS
from pts.config.spec import RwMix, Spec, format_size, parse_size

# The deviation sentences read a pts.config.settings.Settings, which is made from these rows
# (typed Any here: settings imports this module)
Settings = Any

# The value choices of the options that have them (pts.config.settings re-exports them).
PURGE_CHOICES = ("auto", "sanitize", "format", "security-erase", "trim", "none")
# How the points of a round are run (pts.tools.fio_round): one fio process per round with
# the points back to back, one process with each point waiting for the one before, or one
# fio process per point.
ROUND_MODES = ("pipelined", "stonewalled", "per-point")
# fio's I/O engine (pts-digest §11: "ioengine=libaio or io_uring"). libaio is the default: the
# engine of the PTS readings and of every reference tool (anchors.md), so figures compare with
# theirs; io_uring (with fixed buffers and registered files; --io-poll: polled completion)
# for fast drives whose libaio figure is the host's (issue 33, docs/running.md).
IO_ENGINES = ("libaio", "io_uring")
# The host ceiling (pts.procedure.ceiling): "auto" measures it on a RAM-backed block device
# before each test where one can be made (root: null_blk, else a loop device over tmpfs),
# "off" does not (declared on the report).
HOST_CEILING_CHOICES = ("auto", "off")
# fio --server's own default port (man fio, CLIENT / SERVER): --fio-port's default
FIO_PORT = 8765
# A point is host-bound when its figure reaches this share of the host's ceiling (issue 33
# §1: "e.g. 80 %"), or its mean latency is within this margin of the host's floor.
HOST_BOUND_SHARE = 0.8
HOST_FLOOR_MARGIN = 0.25
# --form-factor: the OCP text's form factors (pts.config.ocp_id_classes; sections 10.4-10.9 of
# v2.7), as a user types them. No read of the drive gives it: the operator declares it.
FORM_FACTOR_CHOICES = FORM_FACTORS


class SettingsError(ValueError):
    """A bad option value; the message names the option and the fix."""


# --- checks: (flag, value, spec, the values checked so far) -> the value the run uses ---

def point_seconds(flag: str, value: int, spec: Spec, done: dict) -> int:
    if value < 1:
        raise SettingsError(f"{flag} {value}: must be a whole number of "
                            f"seconds >= 1 (the spec says {spec.common.point_seconds})")
    return value


def max_rounds(flag: str, value: int, spec: Spec, done: dict) -> int:
    rule = spec.steady_state
    if value < rule.window_rounds:
        raise SettingsError(f"{flag} {value}: must be at least the steady-state "
                            f"window of {rule.window_rounds} rounds (the spec says "
                            f"{rule.max_rounds})")
    return value


def one_of(choices: tuple[str, ...]):
    def check(flag: str, value: str, spec: Spec, done: dict) -> str:
        if value not in choices:
            raise SettingsError(f"{flag} {value}: choose one of {', '.join(choices)}")
        return value
    return check


def form_factor(flag: str, value: str | None, spec: Spec, done: dict) -> str | None:
    """None: not given (the drive's form factor is unknown)."""
    if value is not None and value not in FORM_FACTOR_CHOICES:
        raise SettingsError(f"{flag} {value}: choose one of {', '.join(FORM_FACTOR_CHOICES)} "
                            "(the drive's form factor as the OCP specification names it), or "
                            "leave it out when it is not known")
    return value


def time_scale(flag: str, value: float, spec: Spec, done: dict) -> float:
    if not 0 < value <= 1:
        raise SettingsError(f"{flag} {value:g}: must be a factor with 0 < F <= 1 "
                            "(1 = the spec's durations; 0.01 makes a 5-minute pre-write 3 s)")
    return value


def io_poll(flag: str, value: bool, spec: Spec, done: dict) -> bool:
    if value and done["ioengine"] != "io_uring":
        raise SettingsError(f"{flag}: polled completion is an io_uring option; add "
                            "--ioengine io_uring")
    return value


def host_bound_share(flag: str, value: float, spec: Spec, done: dict) -> float:
    if not 0 < value <= 1:
        raise SettingsError(f"{flag} {value:g}: must be a share with "
                            f"0 < S <= 1 (default {HOST_BOUND_SHARE:g}: a point at 80 % of the "
                            "host's ceiling is host-bound)")
    return value


def host_floor_margin(flag: str, value: float, spec: Spec, done: dict) -> float:
    if not value >= 0:
        raise SettingsError(f"{flag} {value:g}: must be >= 0 (default "
                            f"{HOST_FLOOR_MARGIN:g}: a mean latency within 25 % of the host's "
                            "floor is host-bound)")
    return value


def iops_block_sizes(flag: str, text: str | None, spec: Spec, done: dict) -> tuple:
    return subset(flag, text, parse_size, spec.iops.block_sizes,
                  "IOPS block sizes (" + ", ".join(format_size(b).replace(" ", "")
                                                   for b in spec.iops.block_sizes) + ")")


def iops_rw_mixes(flag: str, text: str | None, spec: Spec, done: dict) -> tuple:
    mixes = subset(flag, text, RwMix.parse, spec.iops.rw_mixes,
                   "R/W mixes (" + ", ".join(str(m) for m in spec.iops.rw_mixes) + ")")
    for tr in spec.iops.tracking:
        if tr.block_size not in done["iops_block_sizes"] or tr.rw_mix not in mixes:
            raise SettingsError(f"--iops-block-sizes/--iops-rw-mixes: the reduced matrix must "
                                f"keep the tracking variable {tr.label}")
    return mixes


def above_zero(flag: str, value: float | None, spec: Spec, done: dict) -> float | None:
    if value is not None and not value > 0:
        raise SettingsError(f"{flag} {value:g}: must be a number > 0 (the spec says "
                            f"{spec.wsat.capacity_multiple:g} fills or "
                            f"{spec.wsat.max_hours:g} h, whichever comes first)")
    return value


def hir_repetitions(flag: str, value: int | None, spec: Spec, done: dict) -> int | None:
    if value is not None and value < 1:
        raise SettingsError(f"{flag} {value}: must be a whole number "
                            f">= 1 (the spec says {spec.hir.repetitions})")
    return value


def power(flag: str, text: str | None, spec: Spec, done: dict) -> tuple:
    """--power's sources (pts.config.power_option.SourceSpec, in order; () for none)."""
    if not text:
        return ()
    try:
        found = power_option.parse(text)
    except power_option.PowerSpecError as exc:
        raise SettingsError(str(exc)) from None
    return tuple(s for s in found if s.kind != "none")


def subset(option: str, text: str | None, parse, allowed: tuple, what: str) -> tuple:
    """A comma-separated subset of the spec's values, returned in the spec's order."""
    if not text:
        return allowed
    chosen = []
    for item in text.split(","):
        try:
            value = parse(item.strip())
        except ValueError as exc:
            raise SettingsError(f"{option}: {exc}") from None
        if value not in allowed:
            raise SettingsError(f"{option}: {item.strip()} is not one of the spec's {what}")
        chosen.append(value)
    return tuple(v for v in allowed if v in chosen)


def grid(option: str, text: str | None, spec: Spec, done: dict) -> tuple[int, ...] | None:
    """A reduced DIRTH/CBW thread-count or queue-depth list (both tests share the grid):
    values of the spec's list, keeping the tracking value (32) and 1 (MinIOPS = TC1/QD1)."""
    if not text:
        return None
    tc = option.endswith("thread-counts")
    dirth = spec.dirth
    allowed = dirth.thread_counts if tc else dirth.queue_depths
    values = subset(option, text, lambda v: int(v) if v.isdigit() else _not_int(v), allowed,
                    ("thread counts (" if tc else "queue depths (")
                    + ", ".join(map(str, allowed)) + ")")
    keep = dirth.tracking_thread_count if tc else dirth.tracking_queue_depth
    for must, why in ((keep, "the tracking point TC32/QD32"), (1, "MinIOPS = TC1/QD1")):
        if must not in values:
            raise SettingsError(f"{option} {text}: the reduced grid must keep {must} ({why}); "
                                f"e.g. {option} {keep},4,1")
    return values


def _not_int(text: str) -> int:
    raise ValueError(f"{text!r} is not a whole number")


# --- deviation sentences: Settings -> the sentence, or None where it keeps to the spec ---

def point_seconds_deviation(s: Settings) -> str | None:
    spec = s.spec.common.point_seconds
    if s.point_seconds != spec:
        return f"Test point duration {s.point_seconds} s instead of {spec} s."
    return None


def max_rounds_deviation(s: Settings) -> str | None:
    spec = s.spec.steady_state.max_rounds
    return f"At most {s.max_rounds} rounds instead of {spec}." if s.max_rounds < spec else None


def purge_deviation(s: Settings) -> str | None:
    if s.purge == "trim":
        return ("Purge replaced by TRIM (blkdiscard of the whole device); TRIM is not a "
                "purge method of the PTS.")
    return "Purge not performed (--purge none)." if s.purge == "none" else None


def iops_matrix_deviation(s: Settings) -> str | None:
    """One sentence for --iops-block-sizes and --iops-rw-mixes (the matrix they reduce)."""
    iops = s.spec.iops
    if s.iops_block_sizes == iops.block_sizes and s.iops_rw_mixes == iops.rw_mixes:
        return None
    return ("IOPS matrix reduced to block sizes "
            + ", ".join(format_size(b) for b in s.iops_block_sizes)
            + " x R/W mixes " + ", ".join(str(m) for m in s.iops_rw_mixes)
            + f" (spec: {len(iops.block_sizes)} x {len(iops.rw_mixes)}).")


def wsat_fills_deviation(s: Settings) -> str | None:
    fills, spec = s.wsat_stop[0], s.spec.wsat.capacity_multiple
    if fills == spec:
        return None
    return f"WSAT stops after {fills:g} drive fill(s) instead of {spec:g} (or at its time limit)."


def wsat_hours_deviation(s: Settings) -> str | None:
    hours, spec = s.wsat_stop[1], s.spec.wsat.max_hours
    return None if hours == spec else f"WSAT time limit {hours:g} h instead of {spec:g} h."


def fob_sweep_deviation(s: Settings) -> str | None:
    if not s.fob_sweep:
        return None
    return ("IOPS: one informative FOB round of the IOPS matrix ran between purge "
            "and WIPC (--fob-sweep); the PTS flow has no step there.")


def time_scale_deviation(s: Settings) -> str | None:
    if s.time_scale == 1:
        return None
    return (f"Fixed long durations (pre-writes, histogram captures, recovery segments and "
            f"access groups) scaled by {s.time_scale:g} (--time-scale).")


def grid_deviation(field: str, what: str):
    def sentence(s: Settings) -> str | None:
        values, full = getattr(s, field), getattr(s.spec.dirth, field[len("dirth_"):], None)
        if values is None or values == full:
            return None
        return (f"DIRTH/CBW demand-variation grid reduced to {what} "
                f"{', '.join(map(str, values))} (spec: {', '.join(map(str, full))}).")
    return sentence


def hir_repetitions_deviation(s: Settings) -> str | None:
    spec = s.spec.hir.repetitions
    if s.hir_repetitions is None or s.hir_repetitions == spec:
        return None
    return (f"HIR: {s.hir_repetitions} repetitions per wait state and return-to-baseline "
            f"segment instead of {spec} (--hir-repetitions).")


def listed(values: tuple[int, ...] | None) -> list[str] | None:
    """As the option is written (resume sets options back from run.json)."""
    return None if values is None else [str(v) for v in values]
