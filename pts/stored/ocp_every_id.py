"""Every requirement ID of an OCP Datacenter NVMe SSD Specification text judged on a stored run
(issue 49 §2: none left out as a group): what `qualify --ocp`, the report's OCP page, the
OCPTV export and the index show. Stored data only.

Each ID of the text (pts.config.ocp_all_ids.all_ids, in text order, with its group and class)
gets PASS, FAIL, NOT APPLICABLE or NOT CHECKED, with why:
  - TABULATED: the requirement table's verdict (pts.stored.ocp_verdicts: C0h, SMART / Health
    logs, purge times, ...);
  - an ID a host rule judges (pts.stored.host_judge: Identify, features, logs, PCIe), from
    the facts the run recorded (its ledger's nvme_facts record, pts.stored.host_facts); a run
    without them: NOT CHECKED saying so;
  - TO BE JUDGED with no rule yet: NOT CHECKED, "not yet judged";
  - the rest by its class (pts.config.ocp_all_ids.resolve): obsolete IDs NOT APPLICABLE;
    another form factor's IDs NOT APPLICABLE once the drive's form factor is known, which no
    read of the drive gives: the operator declares it (the run's --form-factor, run.json
    options; or `qualify --form-factor` for a run recorded without one). Unknown, every
    form-factor ID is NOT CHECKED, saying so.
The host rules receive the drive's facts with the run's own under "run"
(pts.stored.run_facts: form factor, kernel, I/O scheduler, fio's engine, power records).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pts.config import ocp_requirements
from pts.config.ocp_all_ids import LOCATOR, OcpId, all_ids, resolve
from pts.config.ocp_id_classes import GROUPS, NOT_APPLICABLE, NOT_CHECKED, SUBJECTS, TABULATED
from pts.stored import host_judge, host_rules, ocp_verdicts
from pts.stored.host_facts import facts as facts_record
from pts.stored.latency_monitor_rules import with_page_after
from pts.stored.model import RunView
from pts.stored.ocp_stored import FAIL, PASS
from pts.stored.run_facts import FROM_QUALIFY, run_facts

WORDS = (PASS, FAIL, NOT_APPLICABLE, NOT_CHECKED)
NO_FACTS = ("judged from the drive's Identify, features, logs and PCIe registers "
            "(pts.stored.host_judge), which this run did not record")


class FormFactorError(ValueError):
    """A form factor given at qualify time that the run's own contradicts."""


@dataclass(frozen=True)
class IdVerdict:
    entry: OcpId
    verdict: str                      # WORDS
    reason: str
    evidence: tuple[str, ...] = ()
    readings: tuple[str, ...] = ()
    by: str = "class"                 # "table", "host rule" or "class" (ocp_all_ids)

    @property
    def id(self) -> str:
        return self.entry.id

    def as_dict(self) -> dict:
        e = self.entry
        return {"version": e.version, "id": e.id, "group": e.group, "subject": e.subject,
                "verdict": self.verdict, "reason": self.reason,
                "evidence": list(self.evidence), "readings": list(self.readings),
                "judged_by": self.by, "section": e.section, "spec_line": e.at,
                "spec_locator": LOCATOR[e.version]}


@dataclass(frozen=True)
class Every:
    """Every ID's verdict of one version on one run, in text order."""
    version: str
    verdicts: tuple[IdVerdict, ...]
    facts_at: str = ""                # the moment of the facts record judged ("": none)
    form_factor: str | None = None    # the drive's, as declared (None: unknown)
    form_factor_from: str = ""        # pts.stored.run_facts: "--form-factor", "qualify ..."

    def of(self, *words: str) -> list[IdVerdict]:
        return [v for v in self.verdicts if v.verdict in words]

    @property
    def counts(self) -> dict[str, int]:
        return count(self.verdicts)

    @property
    def counts_text(self) -> str:
        return counts_text(self.verdicts)

    @property
    def groups(self) -> list[tuple[str, str, list[IdVerdict]]]:
        """(group, subject, its verdicts), groups in the order the text first names them."""
        out: dict[str, list[IdVerdict]] = {}
        for v in self.verdicts:
            out.setdefault(v.entry.group, []).append(v)
        return [(g, subject(g), vs) for g, vs in out.items()]

    @property
    def spec_text(self) -> str:
        return ocp_requirements.SPEC_TEXT[self.version]

    @property
    def form_factor_note(self) -> str:
        return form_factor_note(self.form_factor, self.form_factor_from)


def count(verdicts: Iterable[IdVerdict]) -> dict[str, int]:
    found = dict.fromkeys(WORDS, 0)
    for v in verdicts:
        found[v.verdict] += 1
    return found


def counts_text(verdicts: Iterable[IdVerdict]) -> str:
    return ", ".join(f"{n} {w}" for w, n in count(verdicts).items())


def subject(group: str) -> str:
    return SUBJECTS.get(group) or GROUPS.get(group, ("",))[0]


def form_factor_note(form_factor: str | None = None, source: str = "") -> str:
    if form_factor:
        recorded = " (the run recorded none)" if source == FROM_QUALIFY else ""
        return (f"form factor {form_factor}, {declared(source)}{recorded}: the other form "
                "factors' IDs are NOT APPLICABLE")
    return ("form factor not known (not declared with --form-factor): the form factors' IDs "
            "are NOT CHECKED, none NOT APPLICABLE")


def declared(source: str) -> str:
    """How the form factor was given: the run's option, or qualify's for a run recorded
    without one (no read of the drive gives it)."""
    return "declared with --form-factor" + (" at qualify time" if source == FROM_QUALIFY
                                            else "")


def host_facts(run: RunView) -> tuple[dict, str] | None:
    """The facts of the run's last nvme_facts record that read them, and its moment, or None
    (pts.stored.host_facts.facts)."""
    found = facts_record(run)
    return (found.facts, found.moment or "") if found is not None else None


def _host(v: host_rules.Verdict, moment: str) -> tuple[str, str, tuple[str, ...]]:
    evidence = tuple(f"{e.source}: {e.where} = {e.value}" for e in v.evidence)
    where = f" (facts read at {moment})" if moment else ""
    return v.verdict, v.why + where, evidence


def _table_stands(table_verdict: str, host: host_rules.Verdict | None) -> bool:
    """Whether the table's verdict is the ID's when a host rule judges it too: not when the
    table judged nothing, nor when the rule FAILs what the table did not (a FAIL found either
    way is the drive's: SMART-31's count the table reads may PASS while the power rule sees
    it fall during the rounds; pts.stored.power_rules)."""
    if host is None:
        return True
    if table_verdict == ocp_verdicts.NOT_CHECKED:
        return False
    return not (host.verdict == FAIL and table_verdict != FAIL)


def judge_every(run: RunView, version: str, form_factor: str | None = None) -> Every:
    """Every ID of `version`'s text, judged on `run`. `form_factor`: the drive's, given at
    qualify time for a run recorded without one (FormFactorError where the run's differs)."""
    ran = run_facts(run, form_factor)
    if form_factor and ran["form_factor"] != form_factor:
        raise FormFactorError(f"--form-factor {form_factor}: the run declared "
                              f"{ran['form_factor']} with --form-factor; leave "
                              "--form-factor out (the run's is used)")
    ff = ran["form_factor"]
    table = {v.requirement.id: v for v in ocp_verdicts.judge_all(run, version)}
    facts = host_facts(run)
    # the C3h page the suite's own latency monitor configuration produced, where there is one
    host = ({v.req_id: v for v in host_judge.judge(
        with_page_after({**facts[0], "run": ran}), version)} if facts else {})
    ruled = set(host_judge.ids(version))
    moment = facts[1] if facts else ""
    out = []
    for e in all_ids(version):
        row = table.get(e.id) if e.cls == TABULATED else None
        if row is not None and _table_stands(row.verdict, host.get(e.id)):
            out.append(IdVerdict(e, row.verdict, row.reason, row.evidence, row.readings,
                                 "table"))
        elif e.id in host:
            out.append(IdVerdict(e, *_host(host[e.id], moment), by="host rule"))
        elif e.id in ruled:
            out.append(IdVerdict(e, NOT_CHECKED, NO_FACTS, by="host rule"))
        else:
            cls, why = resolve(e, ff)
            if cls == NOT_APPLICABLE and e.form_factor:
                why += f" ({declared(ran['form_factor_from'])})"
            out.append(IdVerdict(e, cls if cls in WORDS else NOT_CHECKED, why))
    return Every(version, tuple(out), moment, ff, ran["form_factor_from"])


def summary(run: RunView) -> Every | None:
    """The newest version's, for a run on an NVMe drive (None otherwise, as
    ocp_verdicts.summary)."""
    if run.device.transport != "nvme" or run.device.emulated:
        return None
    return judge_every(run, ocp_requirements.VERSIONS[-1])
