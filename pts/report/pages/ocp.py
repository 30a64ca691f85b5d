"""The "OCP requirements" page: a verdict on every requirement ID of the newest OCP Datacenter
NVMe SSD Specification text the suite cites (pts.stored.ocp_every_id; what `qualify --ocp`
prints), for a run on an NVMe drive. Every ID is on it, none left out as a group: the counts
per verdict of each of the text's groups; each PASS and FAIL in a row of its own with reason
and evidence; the NOT APPLICABLE and NOT CHECKED ones grouped by their reason, with their IDs,
so the page stays short. No page for a run on another device (a loop device, the emulated
SSD, SATA / SAS): nothing of it would be judged."""

from __future__ import annotations

from reportlab.platypus import Flowable

from pts.config.ocp_id_classes import NOT_APPLICABLE, NOT_CHECKED
from pts.report.renderers.layout import GREEN, RED, PageInfo, grid_table, h1, h2, mm, new_page, para
from pts.results import records
from pts.stored import latency_monitor_rules, ocp_every_id
from pts.stored.model import RunView
from pts.stored.ocp_drive_list import MARK, drive_list
from pts.stored.ocp_stored import FAIL, PASS

TITLE = "OCP requirements"
CHUNK = 80          # IDs in one table row: a row must fit a page (reportlab cannot split it)


def build(run: RunView) -> list[Flowable]:
    found = ocp_every_id.summary(run)
    if found is None:
        return []
    version, counts = found.version, found.counts_text
    info = PageInfo(TITLE, f"OCP Datacenter NVMe SSD {version}",
                    "Table: OCP requirements, verdict and evidence", counts,
                    alarm=bool(found.of(FAIL)))
    facts = (f"the drive's Identify, features and logs read at {found.facts_at}"
             if found.facts_at else "no Identify / feature / log facts (the IDs a host rule "
             "judges from them are NOT CHECKED, saying so)")
    said = drive_list(run, found)      # the drive's own C5h list of what it does not meet
    monitor = latency_monitor_rules.said([r.to_json() for r in
                                          run.records_of(records.LatencyMonitor)])
    story = new_page(info) + [
        h1(TITLE),
        para(f"<b>{counts}</b> of the {len(found.verdicts)} requirement IDs of the OCP "
             f"Datacenter NVMe SSD Specification {version} text, in {len(found.groups)} "
             f"groups (python -m pts qualify RUN --ocp {version}), judged from what this run "
             "stored: the drive's SMART / Health log and its C0h page at each step, the "
             f"purge's command and time, {facts}. A requirement is never passed without "
             "data; NOT APPLICABLE: obsolete in this text, or another form factor's "
             f"({found.form_factor_note}); \"reading:\" marks a value of the specification "
             f"this project had to interpret. Line numbers are those of the spec text "
             f"{found.spec_text}.", markup=True),
        *([para("; ".join(said.lines))] if said else []),
        *([para(monitor)] if monitor else []),
        h2("OCP requirement groups"), grid_table(
            ["Group", "About", PASS, FAIL, "N/A", "Not checked"],
            [[group, about, *(str(n) for n in ocp_every_id.count(vs).values())]
             for group, about, vs in found.groups],
            col_widths=[28 * mm, 82 * mm, 15 * mm, 15 * mm, 15 * mm, 25 * mm],
            align_right_from=2)]
    rows = [[v.id, v.entry.subject, _verdict(v.verdict),
             v.reason + (" | " + "; ".join(v.evidence) if v.evidence else "")
             + (" | " + "; ".join(v.readings) if v.readings else "")
             + (f" | {MARK}" if said and said.says(v.id) else ""),
             str(v.entry.at)] for v in found.of(PASS, FAIL)]
    if rows:
        story += [h2("OCP requirements judged"), grid_table(
            ["ID", "Requirement", "Verdict", "Reason | evidence | readings", "Line"], rows,
            col_widths=[21 * mm, 35 * mm, 16 * mm, 95 * mm, 13 * mm], align_right_from=4)]
    for word, heading in ((NOT_APPLICABLE, "OCP requirements not applicable"),
                          (NOT_CHECKED, "OCP requirements not checked")):
        groups: dict[str, list[str]] = {}
        for v in found.of(word):
            groups.setdefault(v.reason, []).append(v.id)
        if groups:
            story += [h2(heading), grid_table(
                ["Requirements", "Why"],
                [[", ".join(ids[i:i + CHUNK]), why if i == 0 else f"{why} (continued)"]
                 for why, ids in groups.items() for i in range(0, len(ids), CHUNK)],
                col_widths=[125 * mm, 55 * mm])]
    return story


def _verdict(word: str) -> Flowable:
    colour = GREEN if word == PASS else RED
    return para(f'<font color="#{colour.hexval()[2:]}"><b>{word}</b></font>', "cell",
                markup=True)
