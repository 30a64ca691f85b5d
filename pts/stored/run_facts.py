"""The run's own facts for the host rules (issue 49 §3): what the run recorded about how it ran,
beside the drive's facts (pts.stored.host_facts). pts.stored.ocp_every_id merges them into the
facts dict pts.stored.host_judge.judge receives, under the key "run"; a rule that needs them
reads f["run"] (absent, e.g. facts judged on their own: the rule's KeyError makes it NOT
CHECKED, "not read in this run: run"). Stored data only (run.json and the ledger).

The shape (rules are written against these keys; keys are only ever added):

    {"form_factor": str | None,    # pts.config.ocp_id_classes.FORM_FACTORS; None: unknown
     "form_factor_from": str,      # "--form-factor" (run.json options), "qualify --form-factor"
                                   # (given when the run was judged), "" (unknown)
     "kernel": str,                # the host's kernel release (run.json platform.kernel;
                                   # "": not recorded)
     "io_scheduler": str | None,   # the device's I/O scheduler (run.json platform.io_scheduler,
                                   # pts.device.platform_device; None: not recorded, e.g. a
                                   # drive on another host)
     "ioengine": str,              # fio's ioengine ("libaio", "io_uring"; a run from before
                                   # --ioengine ran libaio)
     "io_poll": bool,              # io_uring polled completion (--io-poll)
     "devices": int,               # drives in the run's session: 1, as no run records the
                                   # size of its session (a several-device session's runs
                                   # each record their own drive)
     "devices_recorded": bool,     # False while `devices` is that default
     "power": {"rounds": [...],    # the run's round_power records, as stored (to_json)
               "points": [...],    # its point_power records, as stored
               "sources": [...]},  # its power_source records, as stored: what each source
                                   # measures and how (pts.stored.power_rules needs them)
     "latency_monitor": [...]}     # its latency_monitor records, as stored: the suite's Set
                                   # Features C5h and the C3h page after
                                   # (pts.stored.latency_monitor_rules)
"""

from __future__ import annotations

from pts.results import records
from pts.stored.model import RunView

FROM_RUN, FROM_QUALIFY = "--form-factor", "qualify --form-factor"


def run_facts(run: RunView, form_factor: str | None = None) -> dict:
    """The run's facts (the module's shape). `form_factor`: given when the run is judged, for
    a run recorded without one (the run's own wins where both are given: the caller checks
    that they agree)."""
    recorded = run.options.get("form_factor")
    found, source = ((recorded, FROM_RUN) if recorded
                     else (form_factor, FROM_QUALIFY) if form_factor else (None, ""))
    return {
        "form_factor": found,
        "form_factor_from": source,
        "kernel": str(run.platform.get("kernel") or ""),
        "io_scheduler": run.platform.get("io_scheduler"),
        "ioengine": str(run.options.get("ioengine") or "libaio"),
        "io_poll": bool(run.options.get("io_poll")),
        "devices": 1,
        "devices_recorded": False,
        "power": {"rounds": [r.to_json() for r in run.records_of(records.RoundPower)],
                  "points": [r.to_json() for r in run.records_of(records.PointPower)],
                  "sources": [r.to_json() for r in run.records_of(records.PowerSourceInfo)]},
        "latency_monitor": [r.to_json() for r in run.records_of(records.LatencyMonitor)],
    }
