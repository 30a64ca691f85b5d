"""The OCP specification's Flexible Data Placement requirements (v2.7 section 6.1), judged from
the FDP logs a run read (pts.tools.nvme_facts: log 20h configurations, 23h host events) and
Identify Controller, and the FDP WAF of each window of a run (log 22h). Rules are added to
pts.stored.host_rules.RULES, keyed by (version, ID); `judge` there applies them.

FDP is optional (6 "Optional Device Features": "If the feature is implemented"): a drive that
does not claim it (Identify Controller CTRATT bit 19, FDPS) gets NOT APPLICABLE on every FDP
ID. The spec asks for one of three configurations (6.1: "a minimum of one of the Flexible Data
Placement configurations"): Single Reclaim Group 1 (FDPSRG-*), Single Reclaim Group 2
(FDPSRG2-*: as 1 but persistently isolated handles) and Die Placement (FDPDP-*); a drive
judged against one is NOT APPLICABLE against the others, named.
"""

from __future__ import annotations

from pts.config.nvme_layout import RUHT_INITIALLY_ISOLATED, RUHT_PERSISTENTLY_ISOLATED
from pts.stored.host_rules import (
    FAIL,
    NOT_APPLICABLE,
    NOT_CHECKED,
    PASS,
    V27,
    Evidence,
    id_ctrl_field,
    rule,
)
from pts.tools.nvme_facts import waf

LOG_20H = "nvme get-log --log-id=0x20 --lsi=ENDGID --raw-binary: FDP Configurations"
LOG_23H = "nvme get-log --log-id=0x23 --lsi=ENDGID --lsp=1 --raw-binary: FDP Events (host)"
MIN_HANDLES = 8


def _claimed(f: dict) -> tuple[bool, Evidence]:
    ctratt, ev = id_ctrl_field(f, "ctratt", "CTRATT (byte 96) bit 19 (FDPS)")
    return bool(ctratt >> 19 & 1), ev


def _configs(f: dict, nrg_one: bool | None) -> tuple[list[dict], Evidence]:
    configs = [c for c in f["fdp_configs"] if c["valid"]
               and (nrg_one is None or (c["nrg"] == 1) == nrg_one)]
    return configs, Evidence(LOG_20H, "configuration descriptors (from byte 16): NRG, NRUH, "
                             "FDPA, handle types", [
                                 {k: c[k] for k in ("index", "nrg", "nruh", "vwc", "ruhts")}
                                 for c in f["fdp_configs"]])


def _fdp(kind: bool | None):
    """The rule applies when the drive claims FDP and has a configuration of `kind` (True: one
    reclaim group, False: several, None: any)."""
    def wrap(fn):
        def check(f):
            claimed, ev = _claimed(f)
            if not claimed:
                return NOT_APPLICABLE, "the drive does not claim FDP (CTRATT bit 19 cleared)", \
                    (ev,)
            configs, cev = _configs(f, kind)
            if not configs:
                which = {True: "single reclaim group (NRG 1)",
                         False: "die placement (NRG > 1)"}[kind]
                return NOT_APPLICABLE, f"no valid {which} configuration in log 20h", (ev, cev)
            verdict, why = fn(f, configs)
            return verdict, why, (ev, cev)
        return check
    return wrap


def _handles(configs: list[dict], ruht: int | None) -> int:
    return max(sum(1 for t in c["ruhts"] if ruht is None or t == ruht) for c in configs)


@rule(V27, "FDPSRG-1", 9248)
@_fdp(True)
def srg_1(f, configs):
    return PASS, f"configuration(s) {[c['index'] for c in configs]} advertise NRG 1"


def _enough_handles(f, configs):
    """FDPSRG-2 and FDPDP-2 alike: at least MIN_HANDLES reclaim unit handles."""
    n = _handles(configs, None)
    return (PASS if n >= MIN_HANDLES else FAIL), f"at most {n} reclaim unit handles"


rule(V27, "FDPSRG-2", 9249)(_fdp(True)(_enough_handles))
rule(V27, "FDPDP-2", 9273)(_fdp(False)(_enough_handles))


@rule(V27, "FDPSRG-3", 9250)
@_fdp(True)
def srg_3(f, configs):
    vwc = f["id_ctrl"]["vwc"] & 1
    bad = [c["index"] for c in configs if c["vwc"]]
    if vwc or bad:
        return FAIL, (f"Volatile Write Cache: Identify Controller VWC bit 0 = {vwc}; FDPA "
                      f"bit 4 (FDPVWC) set in configuration(s) {bad or 'none'}")
    return PASS, "no volatile write cache (VWC bit 0 and FDPA bit 4 cleared)"


def _isolated(f, configs, ruht, name, other_id, other_ruht):
    n = _handles(configs, ruht)
    if n >= MIN_HANDLES:
        return PASS, f"{n} {name} reclaim unit handles in one configuration"
    if _handles(configs, other_ruht) >= MIN_HANDLES:
        return NOT_APPLICABLE, f"the drive meets the other configuration ({other_id})"
    return FAIL, (f"at most {n} {name} handles in a configuration (of "
                  f"{_handles(configs, None)}); neither this nor {other_id} met")


@rule(V27, "FDPSRG-4", 9252)
@_fdp(True)
def srg_4(f, configs):
    return _isolated(f, configs, RUHT_INITIALLY_ISOLATED, "initially isolated", "FDPSRG2-2",
                     RUHT_PERSISTENTLY_ISOLATED)


@rule(V27, "FDPSRG2-2", 9265)
@_fdp(True)
def srg2_2(f, configs):
    return _isolated(f, configs, RUHT_PERSISTENTLY_ISOLATED, "persistently isolated",
                     "FDPSRG-4", RUHT_INITIALLY_ISOLATED)


@rule(V27, "FDPSRG-6", 9255)
@_fdp(True)
def srg_6(f, configs):
    nnss, nn = max(c["nnss"] for c in configs), f["id_ctrl"]["nn"]
    ok = min(nnss, nn) >= 8
    return (PASS if ok else FAIL), f"NNSS {nnss}, Identify Controller NN {nn} (8 asked)"


@rule(V27, "FDPDP-1", 9270)
@_fdp(False)
def dp_1(f, configs):
    return NOT_CHECKED, ("NRG against the number of flash dies: the die count is the "
                         "vendor's, not in a log the host reads")


@rule(V27, "FDPSRG-7", 9257)
@_fdp(True)
def srg_7(f, configs):
    return NOT_CHECKED, "SECTOR-4 and DIX-1 in an FDP configuration: a format test, not run"


@rule(V27, "FDPG-2", 9244)
def fdpg_2(f):
    claimed, ev = _claimed(f)
    if not claimed:
        return NOT_APPLICABLE, "the drive does not claim FDP (CTRATT bit 19 cleared)", (ev,)
    events = f.get("fdp_host_events", [])
    seen = sorted({(e["name"], tuple(e["flag_names"])) for e in events})
    return NOT_CHECKED, ("disclosure to the customer is a document; the events the drive "
                         f"reported ({len(events)}) are the evidence to hold it against"), (
        ev, Evidence(LOG_23H, "events (from byte 64): type, flags", seen))


def waf_windows(readings: list[tuple[str, dict]]) -> list[dict]:
    """The FDP WAF of each window between consecutive log 22h readings (label, stats), with
    its evidence: the counters at both ends."""
    out = []
    for (a, before), (b, after) in zip(readings, readings[1:], strict=False):
        w = waf(before, after)
        out.append(dict(w, window=f"{a} -> {b}", hbmw=(before["hbmw"], after["hbmw"]),
                        mbmw=(before["mbmw"], after["mbmw"])))
    return out
