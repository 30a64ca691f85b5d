"""The conformance matrix (issue 21 §5): one row per requirement of the spec digest
(../shared/reference/pts-digest.md), saying how sure we are of it, where the suite
implements it and which project test checks it. docs/conformance.md is generated from
these rows (`python -m pts conformance --write`); tests/unit/test_conformance.py fails when
a requirement of the digest has no row, a row names a test or module that does not exist,
or the document differs from what `render()` gives.

A requirement of the digest, mechanically: each `##` section of §5-§8 without `###`
subsections (§5), each `###` subsection of §5-§8 (§6.1 ... §8.4), and each row of the §13
Readings table (by its first cell). Status: `confirmed` (the digest tags it [C] or the
PTS-E 1.0 text has it), `reading` (read from implementations: pts-digest §13, each value
marked in specs/*.toml [provenance.*]), `deviation` (the suite does otherwise, or does
not do it; said in the `note`). A deviation may name no test when nothing is implemented.
"""

from __future__ import annotations

from dataclasses import dataclass

CONFIRMED, READING, DEVIATION = "confirmed", "reading", "deviation"


@dataclass(frozen=True)
class Row:
    requirement: str     # "§6.1" or "§13: <item as the Readings table names it>"
    clause: str          # the spec clause as the digest gives it
    status: str
    where: str           # module(s) implementing it, repository-relative
    test: str            # pytest node id that checks it ("" only for a deviation)
    note: str = ""


E2E, UNIT, REPORT = "tests/e2e/", "tests/unit/", "tests/report/"
DIRTH_CBW_E2E = E2E + "test_dirth_cbw_integration.py::"

ROWS: tuple[Row, ...] = (
    Row("§5", "Purge before preconditioning; method reported; no purge declared",
        CONFIRMED, "pts/conditioning/purge.py",
        E2E + "test_purge_verify.py::test_a_purge_that_erased_nothing_fails_closed",
        "TRIM / none run only as declared deviations"),
    Row("§6.1", "Steady state definition (PTS 2.0.2 §2.1.24)", CONFIRMED,
        "pts/procedure/steady_state.py",
        UNIT + "test_steady_state.py::test_example_b_hand_computed"),
    Row("§6.2", "Window x-4..x, 20 % / 10 % limits, 25 rounds", CONFIRMED,
        "pts/procedure/rounds.py",
        UNIT + "test_steady_state.py::test_only_the_last_window_is_judged"),
    Row("§6.3", "Steady-state evidence reported", CONFIRMED, "pts/report/pages/steady.py",
        REPORT + "test_report_pdf.py::test_evidence_table"),
    Row("§6.4", "Tracking variable per test", CONFIRMED,
        "pts/testdefs/latency.py, pts/testdefs/iops.py",
        E2E + "test_latency_integration.py::test_response_times_and_tracking_are_fios"),
    Row("§6.5", "Steady-state maths: least-squares slope excursion", CONFIRMED,
        "pts/procedure/steady_state.py",
        UNIT + "test_steady_state.py::test_against_scipy_linregress"),
    Row("§6.6", "Worked examples, inclusive limits", CONFIRMED, "pts/procedure/steady_state.py",
        UNIT + "test_steady_state.py::test_range_exactly_20_percent_passes_inclusive_limit"),
    Row("§7.1", "IOPS: 7 mixes x 8 block sizes, spec order", CONFIRMED, "pts/testdefs/iops.py",
        E2E + "test_iops_integration.py::test_points_in_spec_order_with_na_cells_and_raw_json"),
    Row("§7.2", "Throughput: SEQ read then write per block size", CONFIRMED,
        "pts/testdefs/throughput.py",
        E2E + "test_throughput_integration.py::test_points_seq_read_then_write_and_decimal_mbps",
        "its TC 1 / QD 32 is a reading (specs/*.toml throughput.thread_count)"),
    Row("§7.3", "Latency: TC1/QD1, mix outer, block size inner", CONFIRMED,
        "pts/testdefs/latency.py",
        E2E + "test_latency_integration.py::test_wipc_and_points_at_tc1_qd1"),
    Row("§7.4", "WSAT: FOB, RND 4 KiB writes, 4x capacity or 24 h", CONFIRMED,
        "pts/testdefs/wsat.py",
        E2E + "test_wsat_integration.py::test_loop_stops_at_the_time_limit_and_passes",
        "PTS 2.0.2's duration split is a reading (specs/*.toml wsat.max_hours)"),
    Row("§7.5", "HIR: preconditioning, wait states, return to baseline", READING,
        "pts/testdefs/hir.py, pts/testdefs/hir_schedule.py",
        E2E + "test_hir_integration.py::test_hir_runs_and_records_every_wait_state"),
    Row("§7.6", "XSR: SEQ / RND / SEQ access groups, recovery time", READING,
        "pts/testdefs/xsr.py",
        E2E + "test_xsr_integration.py::test_xsr_three_groups_with_intervals"),
    Row("§7.7", "DIRTH: preconditioning, 7 x 7 TC/QD rounds, operating points, histograms",
        READING, "pts/testdefs/dirth_cbw_jobs.py, pts/testdefs/dirth_cbw_select.py",
        DIRTH_CBW_E2E + "test_phases_prewrites_and_points[dirth]"),
    Row("§7.8", "ECW / CBW: DIRTH's procedure with the JESD219 workload", READING,
        "pts/testdefs/dirth_cbw_jobs.py",
        DIRTH_CBW_E2E + "test_cbw_fio_jobs_have_bssplit_and_zones"),
    Row("§8.1", "Common reporting (PTS-E 1.0 §5)", CONFIRMED, "pts/report/pages/summary.py",
        REPORT + "test_report_pdf.py::test_identity_and_verdict"),
    Row("§8.2", "Page header on every report page (Annex A sample)", READING,
        "pts/report/pages/snia_header.py",
        REPORT + "test_page_snapshots.py::test_page_matches_its_baseline"),
    Row("§8.3", "Per-test report pages", READING, "pts/report/pages/registry.py",
        REPORT + "test_page_snapshots.py::test_same_pages_as_the_baselines"),
    Row("§8.4", "Informative annexes", DEVIATION, "pts/report/document.py", "",
        "not produced: informative only, their content unknown to the digest"),
    Row("§13: HIR preconditioning round", "PTS HIR step 2", READING,
        "pts/testdefs/hir.py, pts/procedure/preconditioning.py",
        UNIT + "test_hir_schedule.py::"
               "test_spec_round_is_30_intervals_the_last_tracked_and_no_deviation",
        "30 intervals of point_seconds, the last tracked (spec file "
        "hir.precondition_round_intervals; another count is declared)"),
    Row("§13: HIR wait-state names", "PTS HIR", READING, "pts/config/spec_recovery.py",
        UNIT + "test_spec_readings.py::test_wait_state_names_follow_the_declared_reading",
        "WS1/2/3/5/10 (spec file hir.wait_state_naming)"),
    Row("§13: HIR timing", "PTS HIR step 3", READING, "pts/testdefs/hir_schedule.py",
        UNIT + "test_hir_schedule.py::"
               "test_spec_schedule_is_five_states_of_5_s_writes_and_15_5_hours"),
    Row("§13: HIR, XSR TC/QD", "PTS HIR, XSR", READING, "pts/config/spec_recovery.py",
        UNIT + "test_spec_recovery.py::test_every_spec_has_hir_and_xsr"),
    Row("§13: XSR groups", "PTS XSR", READING, "pts/testdefs/xsr.py, pts/testdefs/xsr_recovery.py",
        E2E + "test_xsr_integration.py::test_xsr_three_groups_with_intervals",
        "recovery time: this suite's settling rule, S5's as the alternative"),
    Row("§13: DIRTH/CBW preconditioning round", "PTS DIRTH step 2", READING,
        "pts/testdefs/dirth_cbw_jobs.py", DIRTH_CBW_E2E + "test_phases_prewrites_and_points[dirth]",
        "the first minute tracked (spec file dirth.precondition_sample)"),
    Row("§13: DIRTH inter-round pre-write", "PTS DIRTH step 3", READING,
        "pts/testdefs/dirth_cbw_jobs.py", DIRTH_CBW_E2E + "test_phases_prewrites_and_points[cbw]"),
    Row("§13: Operating points", "PTS DIRTH step 5", READING, "pts/testdefs/dirth_cbw.py",
        DIRTH_CBW_E2E + "test_operating_points_and_histograms[dirth]"),
    Row("§13: MaxIOPS", "PTS DIRTH step 4", READING, "pts/testdefs/dirth_cbw_select.py",
        UNIT + "test_dirth_cbw.py::test_operating_points_on_constructed_data"),
    Row("§13: MidIOPS", "PTS DIRTH step 4", READING, "pts/testdefs/dirth_cbw_select.py",
        UNIT + "test_dirth_cbw.py::test_midiops_candidates_under_the_ceiling_or_all",
        "among the points under the ART ceiling (spec file dirth.midiops_candidates)"),
    Row("§13: CBW/ECW mix", "JESD219 (PTS CBW/ECW)", READING, "pts/testdefs/dirth_cbw_jobs.py",
        DIRTH_CBW_E2E + "test_cbw_fio_jobs_have_bssplit_and_zones"),
    Row("§13: CBW alignment", "JESD219 (PTS CBW/ECW)", READING, "pts/testdefs/dirth_cbw_jobs.py",
        DIRTH_CBW_E2E + "test_cbw_fio_jobs_align_as_the_run_declares",
        "4 KiB as fio's examples/jesd219.fio (spec file cbw.block_align)"),
)


def render() -> str:
    """docs/conformance.md."""
    out = [
        "# Conformance matrix",
        "",
        "Generated from `pts/config/conformance.py` by `python -m pts conformance --write`; "
        "do not edit by hand (tests/unit/test_conformance.py compares this file with the "
        "generator and checks every row against the spec digest and the test suite).",
        "",
        "One row per requirement of the spec digest (`../shared/reference/pts-digest.md`): "
        "each section of §5-§8 and each row of its §13 Readings table. **confirmed**: the "
        "spec text or SNIA's own pages state it; **reading**: read from public "
        "implementations, marked in `specs/*.toml` (`[provenance.*]`) and listed on every "
        "report that uses it; **deviation**: the suite does otherwise (the note says how).",
        "",
        "| Requirement | Clause | Status | Implemented in | Checked by | Note |",
        "|---|---|---|---|---|---|",
    ]
    for r in ROWS:
        test = f"`{r.test}`" if r.test else "—"
        out.append(f"| {r.requirement} | {r.clause} | {r.status} | `{r.where}` | {test} | "
                   f"{r.note} |")
    counts = {s: sum(1 for r in ROWS if r.status == s) for s in (CONFIRMED, READING, DEVIATION)}
    out += ["", f"{len(ROWS)} requirements: " + ", ".join(f"{n} {s}" for s, n in counts.items())
            + ".", ""]
    return "\n".join(out)
