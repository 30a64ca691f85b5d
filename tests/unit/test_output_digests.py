"""Behaviour unchanged, shown by bytes (issue 48): the SHA-256 of every output of a fixed set
of stored runs, as the code at DIGESTS_FROM made them. A refactoring that changes none of
these bytes changed no output a user sees.

The runs (tests/support/digests.py builds them under a temporary REPORTS_DIR):
- ref-a1, ref-a2, ref-b1, ref-b2: copies of the reference run (tests/data/reference-run),
  model "Digest NVMe SSD", serials SN-D1 / SN-D2, firmware FW-A (a1, a2) and FW-B (b1, b2);
  every IOPS and MB/s figure of their records scaled by 1.0, 1.02, 0.90, 0.93. ref-a1 is the
  reference run with only its identity, run id and start date changed;
- redone: the reference run with the records of IOPS round 7 point 5, HIR state 2 and XSR
  group 2 stored twice (a resumed run redoing them), the second 10 % higher;
- rwsw: tests/support/synthetic/rwsw_run.build (rwsw-wsat + rwsw-streams).

Made independent of library versions and of where and when the test runs (the helper's
docstring says how): no PDF's or chart image's bytes are digested, as they change with
reportlab, matplotlib and poppler; the PDFs' text is (pdftotext -layout, page by page), and
each chart's content as our code put it on the matplotlib figure (titles, axis labels and
scales, the ticks it labelled, every line's label and x/y data, texts, bars, 3-D bars'
arguments, scatter points, legend) as text, the charts themselves drawn blank (not covered:
filled areas, colours, sizes, and the ticks matplotlib places itself); the temporary folder
is written <REPORTS>; the index's mtimes and indexing times are left out; the report date
is SOURCE_DATE_EPOCH's (tests/conftest.py).

Deterministic: made twice (two processes) at e45646c, and at main's bb20802 and 84ce8e3 (each
a copy by git archive), all equal.

INTENDED CHANGES (issue 48 §1) will change two of these, and must then be listed here with
the commit that makes them, and the digest updated in the same commit:
- "ref-a1 export ocptv", "redone export ocptv": the HIR figure names of the OCPTV export
  become the index's (`baseline_iops`, `wait_ratio`; today `hir baseline ss_iops`,
  `hir state N (...) ratio to baseline`);
- "redone export ocptv": a redone point, state or group listed once (its last record), as
  the index and the CSV / JSON export already do (today HIR state 2 and XSR group 2 are
  there twice).
Changes made on purpose so far:
- issue 48 §1 (the figure catalogue, pts.stored.figures): "ref-a1 export ocptv" and "redone
  export ocptv": HIR's `hir baseline ss_iops` is `hir baseline_iops`, `hir state K (N s
  idle) ratio to baseline` is `... wait_ratio` (the index's names); "redone export ocptv":
  HIR state 2 and XSR group 2 listed once, from their last record, in state / group order
  (were twice). Nothing else in either file changed (diffed against e45646c's output).
- issue 49 §1-2 (the C0h page read as bytes; each SMART-n's fields from the C0h table): the
  OCP verdicts' reasons in "report pdf text", "report html" (the OCP page) and the JSON
  exports ("ref-a1 / redone / rwsw export json"): reserved bytes "not judged" (was "nvme-cli's
  JSON does not print them"), SLOG-3's reason (the suite decodes the bytes), and v2.7's
  SMART-30, -32..-52 field checks like SMART-1's, NOT CHECKED on these runs for the reason
  SMART-1 is (no NVMe counters; was "a C0h field nvme-cli 2.3's OCP plugin does not
  print"). Counts unchanged (1 PASS, 0 FAIL, 134 NOT CHECKED); nothing else differs.
- issue 49 §2/§4 (every requirement ID listed, pts.stored.ocp_every_id): "report pdf text"
  and "report html": the OCP page lists all 1,717 IDs of the v2.7 text (was the 135 of the
  table and one 'not tabulated' line): a table of the 172 groups with counts per verdict,
  the judged rows, the NOT APPLICABLE and NOT CHECKED IDs by reason (1 PASS, 0 FAIL, 59 NOT
  APPLICABLE, 1657 NOT CHECKED); it runs 11 pages (was 2), so every later page's number and
  the contents' page numbers move by 9. Nothing else differs.
- issue 49 §4 (a diagnosis per OCP requirement ID): "ref-a1 export ocptv", "redone export
  ocptv", "rwsw export ocptv": a last step "ocp-requirements-2.7" with 1,717 diagnoses (one
  per ID of the v2.7 text, as qualify --ocp says) and the counts' log, before the run's
  verdict log and testRunEnd (whose sequence numbers move). Nothing else differs.
- issue 49 §4 (the OCP counts per run in the index): "index rows": schema version 2 (the
  runs table's ocp_version, ocp_pass, ocp_fail, ocp_not_applicable, ocp_not_checked of all
  six runs, each on an NVMe drive: 2.7, 1, 0, 59, 1657 for each, rwsw included)
  and reader 3; "history text": a line "OCP 2.7: 1 PASS, 0 FAIL, 59 NOT
  APPLICABLE, 1657 NOT CHECKED" under each run; "history json": each run's "ocp". Nothing
  else differs.
- issue 49 §3 (host rules for TEL, SELFTST, TTHROTTLE-9/10, EREC, NVMe-CFG-1/11,
  NVMe-AD-15/16/26/29/33, NVMe-IO-11..14, FDPSRG2-1, PCI-2/35/42: 0961ccf, 3163db4 and the
  next commit): "report pdf text", "report html" and the three "export ocptv": those 53 IDs'
  NOT CHECKED reason is "judged from the drive's Identify, features, logs and PCIe registers
  ..., which this run did not record" (was "... not yet judged"), so they move between the
  two reasons' lists on the OCP page. Counts, page count and everything else unchanged
  (diffed against 6ecf714's).
- issue 49 §4 (export --json lists every OCP requirement ID, pts.stored.ocp_every_id):
  "ref-a1 / redone / rwsw export json": `schema` 2 (was 1); `ocp` (the v2.7 text's 1,717
  IDs with group, verdict, reason, evidence, judged_by and spec line, the counts per verdict
  and per group of its 172 groups, the form factor note: 1 PASS, 0 FAIL, 59 NOT APPLICABLE,
  1657 NOT CHECKED, as qualify --ocp 2.7) replaces `ocp_requirements` (the 135 and 82 rows
  of the v2.7 and v2.0 tables; those 135 rows' verdicts, reasons, evidence and lines are the
  same in `ocp`). Every other key equal (diffed against e0838b2's).
- issue 50 §4 (the release gate's answer kept in the index, pts.index.gate_store): "index
  rows": schema version 3 and its table release_gates, one row for 'Digest NVMe SSD' (FW-A
  against FW-B, built-in margins, level 0.05: inconclusive, exit 3, the answer as `pts
  history ... --gate --json` gives it); its computed_at is left out as indexed_at is. With
  that table and that schema_version row taken out, the output's digest is the old one
  (84dfab9a...): nothing else differs.
- issue 50 §1 (change points under one level for the whole history, pts.index.changepoints:
  a split's p by Student's t times the splits searched, Holm over all figures): "history
  text": the line naming the method ("E-divisive ... for where; Student's t-test (pooled)
  ... Holm's step-down over all the figures ..." instead of "... with a permutation test
  (199 permutations, seed 41)"). The change points found are the same ("history json",
  which holds them, unchanged); with the old method line put back the old digest
  (255f617a...) comes back.
- issue 49 §3 (host rules for TEL-1/10..13/16..21/24, NVMe-OPT-6, NVMe-AD-22/27/31/32,
  NVMe-IO-5/6/7/10, NVMe-CFG-10, PCI-14/25/26/28 and the form factors' link minimums FFM2-5,
  FFE1S-2, FFE1L-2, FFE2-2; the other IDs of those groups classed by what they need):
  "report pdf text", "report html", the three "export json" and "export ocptv": those IDs'
  NOT CHECKED reason is "judged from the drive's Identify, ... which this run did not
  record" (was "... not yet judged", or for the form factors' "applies only to ... drives;
  the drive's form factor is not known ..."), and 51 more move from "not yet judged" to
  their class's reason (a temperature chamber, a PCIe analyser, MCTP, a power cycle or
  reset, the vendor's documents, error injection, not yet run). Counts (1 PASS, 0 FAIL, 59
  NOT APPLICABLE, 1657 NOT CHECKED), page count (112) and everything else unchanged
  (diffed against 96c21a9's).
- issue 49 §2/§3 (the form factor as a run fact, --form-factor; META-PERF judged, each
  benchmark target's reason): "report pdf text", "report html" (the OCP page), the three
  "export json" and "export ocptv": the note on the form factor "form factor not known (not
  declared with --form-factor)" (was "(no run record nor datasheet field gives it)", no
  longer true); META-PERF-7, -10, -12 are host rules (pts.stored.meta_perf_rules), NOT
  CHECKED "judged from the drive's Identify ..., which this run did not record" (was "not
  yet judged"); META-PERF-1..6 and -9 NOT CHECKED "a target of Meta's own benchmarks ...,
  which the suite does not run", META-PERF-11 the vendor disclosure reason (were "not yet
  judged"). Counts (1 PASS, 0 FAIL, 59 NOT APPLICABLE, 1657 NOT CHECKED) and page count (112)
  unchanged; nothing else differs (diffed against d8aff77's).
- issue 49 §3 (NVMe-AD-11 from Identify Controller sent with NSID 1, NVMe-OPT-5 from the
  Timestamp's Synch bit: host rules): "report pdf text", "report html", the three "export
  json" and "export ocptv": those two IDs' NOT CHECKED reason is the host rules' "... which
  this run did not record" (was "a host could check it, but the suite does not yet send the
  commands ..."), `judged_by` "host rule". Counts unchanged; nothing else differs.

- issue 51 §4 (the OCP power verdicts, pts.stored.power_rules): "report pdf text", "report
  html", "ref-a1 / redone / rwsw export json" and "... export ocptv": PCM-1 and PCM-4 are
  judged by a host rule now (the largest 1 s average power against the Maximum Power of the
  power state in use), so on these runs, which recorded no host facts, their reason is the
  host rules' "judged from the drive's Identify, ... which this run did not record" (was
  their class's "needs a power meter on the drive's supply rails") and the export's
  `judged_by` "host rule" (was "class"); in the PDF they move to that reason's row. Counts
  unchanged (NOT CHECKED both); nothing else differs (diffed against 354947e's outputs).
- issue 49 §1/§3 (the OCP pages C1h, C3h, C4h, C5h read as bytes at test start and judged,
  pts.stored.ocp_page_rules): "report pdf text", "report html" and the three "export json"
  and "export ocptv": the 60 IDs LMDATA-*, DCLP-*, DSSDPSD-* and URLP-* have host rules now,
  so on these runs (no host facts) their NOT CHECKED reason is "judged from the drive's
  Identify, features, logs and PCIe registers ..., which this run did not record" (was "a
  host could check it, but the suite does not yet send the commands or read the log fields
  it needs") and their `judged_by` "host rule" (was "class"); they move between those two
  reasons' lists on the OCP page. Counts and page count unchanged (1 PASS, 0 FAIL, 59 NOT
  APPLICABLE, 1657 NOT CHECKED; 112 pages); nothing else differs (diffed against a4da7ea's).
- issue 49 §1 (the OCP Hardware Component log page C6h read as bytes at test start and
  judged, pts.stored.ocp_component_rules): "report pdf text", "report html" and the three
  "export json" and "export ocptv": the 38 IDs HWCLOG-*, HWCOMP-*, COMPD-* and CITYPE-* have
  host rules now, so on these runs (no host facts) their NOT CHECKED reason is "judged from
  the drive's Identify, ..., which this run did not record" (was "a host could check it,
  ...") and their `judged_by` "host rule" (was "class"). Counts and page count unchanged (1
  PASS, 0 FAIL, 59 NOT APPLICABLE, 1657 NOT CHECKED; 113 pages); nothing else differs
  (diffed against 8c1e430's, in a copy of HEAD with only these files).
- issue 49 §3 (namespace management and UUID rows judged read-only,
  pts.stored.namespace_uuid_rules): the same outputs: NSM-1, NSM-6, UUID-2 and UUID-4 have
  host rules now (the same reason and `judged_by` change as above). Counts and page count
  unchanged; nothing else differs (diffed against 5b3bbdb's, in a copy of HEAD with only these
  files).
- issue 49 §3 (the latency monitor configured by the suite, Set Features C5h under
  --destructive, pts.conditioning.latency_monitor; judged by pts.stored.latency_monitor_rules):
  "report pdf text", "report html" and the three "export json" and "export ocptv": LMSF-10
  has a host rule now, so on these runs (no host facts) its NOT CHECKED reason is "judged
  from the drive's Identify, ..., which this run did not record" (was "a DSSD Set/Get
  Features field (C0h-CBh) the suite does not send or read") and its `judged_by` "host rule"
  (was "class"); LMLOG-1..18's table reason (pts.config.ocp_rows.NO_LM) says what the suite
  does now ("the latency monitor: the suite reads its log (C3h) at each test's start and,
  under --destructive, configures it ...", was "... but never configures it (Set Features
  C5h) nor judges its contents"); on the OCP page the longer reason reflows its rows. Counts
  and page count unchanged (1 PASS, 0 FAIL, 59 NOT APPLICABLE, 1657 NOT CHECKED; 113 pages);
  nothing else differs (diffed against 711fb03's, in a copy of HEAD with only these files).
- issue 49 §3 (the DSSD features C2h-CBh read with Get Features at test start and judged,
  pts.stored.dssd_feature_rules): "report pdf text", "report html" and the three "export
  json" and "export ocptv": 30 IDs (the Get Features IDs GROWTM-*, GPCIE-1, G1667-*,
  LMGF-1, GPLPI-*, DSSDPSG-*, GDSSDPS-*, TEL-CFG-GF-2/3, GDAEC-*, GIDLE-*, MPCSG-* and the
  Save bit rows SROWTM-10, CPCIE-10, S1667-10, SPLPI-10, SDSSDPS-10, TEL-CFG-SF-10,
  SDAEC-10, SIDLE-10, MPCS-10) have host rules now, so on these runs (no host facts) their
  NOT CHECKED reason is "judged from the drive's Identify, ..., which this run did not
  record" (was "a DSSD Set/Get Features field (C0h-CBh) the suite does not send or read")
  and their `judged_by` "host rule"; 147 Set Features IDs (SROWTM, CPCIE, S1667, SPLPI,
  DSSDPSS, SDSSDPS, TEL-CFG-SF, SDAEC, SIDLE, MPCS) give the reason "a DSSD Set Features
  command's field or behaviour (C2h-CBh): the suite sends no Set Features, ...". Counts
  (1 PASS, 0 FAIL, 59 NOT APPLICABLE, 1657 NOT CHECKED) and page count (113) unchanged;
  nothing else differs (diffed against 54ea919's outputs).
- issue 49 §3 (GETF-1, GETF-5 judged from the DSSD feature reads; DSSDPSG-2 against the NVMe
  power state in use and log C4h; NVMe-AD-31/32 from C9h's default, moved from
  admin_command_rules to pts.stored.dssd_feature_rules): "report pdf text", "report html" and
  the three "export json" and "export ocptv": GETF-1 and GETF-5 have host rules now, so on
  these runs (no host facts) their NOT CHECKED reason is "judged from the drive's Identify,
  ..., which this run did not record" (was "a host could check it, but the suite does not yet
  send the commands or read the log fields it needs") and their `judged_by` "host rule" (was
  "class"); on the OCP page they move between those two reasons' lists (one row a line longer,
  its page's table a line taller). Counts (1 PASS, 0 FAIL, 59 NOT APPLICABLE, 1657 NOT
  CHECKED), page count (113) and every page's footer unchanged; nothing else differs (diffed
  against 5ce7bcb's outputs, in a copy of HEAD with only these files).
A digest that differs fails naming the output; the test has written the new output to a
file it names. To see the difference: write the outputs of the commit the table was made at
(DIGESTS_FROM) and diff them:
    mkdir /tmp/old && git -C REPO archive DIGESTS_FROM | tar -x -C /tmp/old
    cd /tmp/old && PYTHONPATH=/tmp/old python REPO/tests/support/digests.py /tmp/old-out
    diff -r /tmp/old-out THE_FOLDER_THE_FAILURE_NAMES
If the change is meant, put the new digest (printed in the failure) in DIGESTS and say why
in the list above.
"""

from __future__ import annotations

import pytest

from tests.support import digests

pytestmark = pytest.mark.needs("pdftotext")

DIGESTS_FROM = "e45646c"
# (output, what it covers, SHA-256 of its bytes)
DIGESTS = (
    ("report pdf text", "ref-a1's report.pdf (pts.report.document.build_pdf, as `pts "
     "report`): text of every page, pdftotext -layout",
     "b26aa4e8497b21d46771ba75e4a0d2784eb7fa2da502f9a40043de6876f06838"),
    ("report html", "ref-a1's report.html (build_html, as `pts report --html`), data: URIs "
     "of its charts cut to their media type",
     "cdc41bdcfbb45d9232b88c8d500e69e4a02c38d6bd5de7712a50d88a4fc76300"),
    ("report charts", "what ref-a1's report charts show (PDF and HTML builds, each chart "
     "once per build), in drawing order",
     "ab4422ca0534a58c059694e91ba39b20140c6e6624607a6836938c404c82203c"),
    ("compare pdf text", "`pts compare ref-a1 ref-b1`: compare.pdf, text of every page",
     "69653b98a3eba5b800274f2f045b74bd701f0dae6bf9b4b47a2a522e8c2566ad"),
    ("compare csv", "`pts compare ref-a1 ref-b1`: compare.csv",
     "e6853a400229f78169a9e803b12383e80dc3addb02a839bb97c45439ccd593d0"),
    ("compare charts", "what compare.pdf's charts show",
     "bc2d267f86d94cb76b29186a1b9fdf532bc23ee96a1a84337fff8d0982698a6d"),
    ("ref-a1 export csv", "`pts export --csv ref-a1`",
     "5a88650d81366e97c9fab33cc7e6eb3a2798d5ced38400c26ee606068b9d78fb"),
    ("ref-a1 export json", "`pts export --json ref-a1`",
     "a04d8bb6ae8bc0bddad662fb05b9af89567a9dd9f1beee756e63d959b6d12189"),
    ("ref-a1 export ocptv", "`pts export --ocptv ref-a1` (HIR names: the index's, see above)",
     "5e2583e1b4e724f9c8c07061a55b2aea8f3af099078a25351ea47c99c2cc3602"),
    ("redone export csv", "`pts export --csv redone` (the last record of a redone point)",
     "44744e4fd9e1ea8d19d98907d583514557494853dc35f87cd882e9a48a9a70f1"),
    ("redone export json", "`pts export --json redone`",
     "f609a3d345540e907f50004919f95e083bec0f007b382a673ec6df1ca952a604"),
    ("redone export ocptv", "`pts export --ocptv redone` (HIR names the index's; the redone "
     "HIR state and XSR group listed once, their last record: see above)",
     "b12b6c395f5636218b0fd330f592f4afa0f4e8dc8ec5489267b30393dfe51982"),
    ("rwsw export csv", "`pts export --csv rwsw`",
     "b1424c5e0f49a9d7fa998f0584ee80e66f288086eebe5271a4030a1bd6a39e40"),
    ("rwsw export json", "`pts export --json rwsw`",
     "3a5b91d54632afecef9fa7a798c0da50930e9b6c0a5a2e4b05fc38d7888e1fe3"),
    ("rwsw export ocptv", "`pts export --ocptv rwsw`",
     "3a524da659bbfd3148c8d06fe84ed7c3142b7470f4b9cde98230fa25dd6a86b5"),
    ("index rows", "`pts index REPORTS_DIR` of all six runs (SQLite): every row of every "
     "table (runs, tests, figures, schema_version) as sorted JSON, mtimes and indexing times "
     "left out",
     "0177aa119bce3e4b9b25ab3db7976c5e7e24590bf048d90f0cfa2be76c3e6b7f"),
    ("history text", "`pts history 'Digest NVMe SSD' --firmware FW-A --firmware FW-B` on that "
     "index (ref-a1, a2, b1, b2: every figure of every family, verdicts, change points)",
     "ad2ec5273f262421c78de6693ea313742612fc7bce0a82e9e5c667be5d8e8dfa"),
    ("history json", "the same with --json",
     "00a15d3b5c710ca2c3b9c485fbfec0e575cc7a87e04a2bca8ee1c266523819f7"),
)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Every output, made once for the module, and the folder it is written to."""
    work = tmp_path_factory.mktemp("digests")
    outputs = digests.outputs(work / "work")
    digests.write(outputs, work / "made")
    return outputs, work / "made"


def test_the_table_names_every_output_once(made):
    outputs, _ = made
    names = [name for name, _, _ in DIGESTS]
    assert len(set(names)) == len(names), names
    assert sorted(names) == sorted(outputs), (
        f"outputs made but not in DIGESTS: {sorted(set(outputs) - set(names))}; in DIGESTS "
        f"but not made: {sorted(set(names) - set(outputs))}")


@pytest.mark.parametrize("name, covers, expected", DIGESTS, ids=[d[0] for d in DIGESTS])
def test_output_bytes_unchanged(made, name, covers, expected):
    outputs, folder = made
    data = outputs[name]
    assert data.strip(), f"{name}: empty output ({covers})"
    actual = digests.digest(data)
    if actual != expected:
        pytest.fail(
            f"output '{name}' changed: {covers}.\n  digest {actual} (DIGESTS holds "
            f"{expected}, made at {DIGESTS_FROM})\n  the new output: "
            f"{folder / digests.file_name(name)} (every output: {folder})\nA behaviour "
            f"change unless meant: see the old output and diff as this module's docstring "
            f"says; if meant, update the digest and list the change in the docstring.",
            pytrace=False)
