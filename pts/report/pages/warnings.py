"""The warnings of a run, on the summary page: facts that bias the result without being a
deviation from the specification (the platform: PCIe link, NUMA, governor, scheduler; the
purge probe; reads of never-written LBAs; host-bound points, issue 33; required report
fields missing). Each says what was found and what to check. A test whose host ceiling was
not measured says so, with why, in a smaller note under them."""

from __future__ import annotations

from reportlab.platypus import Flowable

from pts.report.renderers.layout import RED, esc, h2, para
from pts.stored import host_ceiling, platform_rows, report_fields
from pts.stored.model import RunView


def collect(run: RunView) -> list[str]:
    return [f"Platform: {w}" for w in platform_rows.warnings(run.platform)] \
        + list(run.warnings) + report_fields.warning(report_fields.rows(run)[1])


def block(run: RunView) -> list[Flowable]:
    found = collect(run)
    out: list[Flowable] = [h2(f"Warnings ({len(found)})")]
    notes = [para(f"Note: {n}", "small") for n in host_ceiling.not_measured(run)]
    if not found:
        return out + [para("None: the platform, the purge probe and the read ranges showed "
                           "nothing that biases the result; every required report field is "
                           "given.")] + notes
    colour = RED.hexval()[2:]
    return out + [para(f'<font color="#{colour}">WARNING:</font> {esc(w)}', "body",
                       markup=True) for w in found] + notes
