"""The "OCP requirements" page: the verdicts on the OCP Datacenter NVMe SSD Specification's
requirements (pts.stored.ocp_verdicts; what `qualify --ocp` prints), for a run on an NVMe
drive. Every requirement of the table is on it: each PASS and FAIL in a row of its own with
reason and evidence; the NOT CHECKED ones grouped by their reason, with their IDs, so none
is left out and the page stays short. No page for a run on another device (a loop device,
the emulated SSD, SATA / SAS): nothing of it would be judged."""

from __future__ import annotations

from reportlab.platypus import Flowable

from pts.config.ocp_requirements import OTHER_GROUPS, SPEC_TEXT
from pts.report.renderers.layout import GREEN, RED, PageInfo, grid_table, h1, h2, mm, new_page, para
from pts.stored import ocp_verdicts
from pts.stored.model import RunView

TITLE = "OCP requirements"


def build(run: RunView) -> list[Flowable]:
    found = ocp_verdicts.summary(run)
    if found is None:
        return []
    verdicts, version, counts = found.verdicts, found.version, found.counts
    info = PageInfo(TITLE, f"OCP Datacenter NVMe SSD {version}",
                    "Table: OCP requirements, verdict and evidence", counts,
                    alarm=bool(found.of(ocp_verdicts.FAIL)))
    rows = [[v.requirement.id, v.requirement.subject, _verdict(v.verdict),
             v.reason + (" | " + "; ".join(v.evidence) if v.evidence else "")
             + (" | " + "; ".join(v.readings) if v.readings else ""),
             str(v.requirement.line)] for v in found.of(ocp_verdicts.PASS, ocp_verdicts.FAIL)]
    groups: dict[str, list[str]] = {}
    for v in found.of(ocp_verdicts.NOT_CHECKED):
        groups.setdefault(v.reason, []).append(v.requirement.id)
    story = new_page(info) + [
        h1(TITLE),
        para(f"<b>{counts}</b> of the {len(verdicts)} requirements tabulated for the OCP "
             f"Datacenter NVMe SSD Specification {version} (python -m pts qualify RUN --ocp "
             f"{version}), judged from what this run stored: the drive's SMART / Health and "
             "C0h logs at each step and the purge's command and time. A requirement is "
             "never passed without data; \"reading:\" marks a value of the specification "
             "this project had to interpret. Line numbers are those of the spec text "
             f"{SPEC_TEXT[version]}.", markup=True),
    ]
    if rows:
        story += [h2("OCP requirements judged"), grid_table(
            ["ID", "Requirement", "Verdict", "Reason | evidence | readings", "Line"], rows,
            col_widths=[21 * mm, 35 * mm, 16 * mm, 95 * mm, 13 * mm], align_right_from=4)]
    story += [h2("OCP requirements not checked"), grid_table(
        ["Requirements", "Why not"], [[", ".join(ids), why] for why, ids in groups.items()],
        col_widths=[60 * mm, 120 * mm]),
        para(f"Not tabulated: {OTHER_GROUPS}.")]
    return story


def _verdict(word: str) -> Flowable:
    colour = GREEN if word == ocp_verdicts.PASS else RED
    return para(f'<font color="#{colour.hexval()[2:]}"><b>{word}</b></font>', "cell",
                markup=True)
