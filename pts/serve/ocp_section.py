"""The run page's OCP section (templates/run.html): every requirement ID of the newest OCP
Datacenter NVMe SSD text judged on the run (pts.stored.ocp_every_id, what `qualify --ocp` prints
and the report's OCP page shows), laid out so that ~1,700 IDs stay readable and the page small:
the counts; each PASS and FAIL in a row, under its group's heading with the group's counts;
the counts of every group of the text, folded; the NOT APPLICABLE and NOT CHECKED IDs folded,
one <details> per reason (as the report's page groups them by reason), in the order the text
first gives each reason."""

from __future__ import annotations

from dataclasses import dataclass

from pts.config.ocp_id_classes import NOT_APPLICABLE, NOT_CHECKED
from pts.stored import ocp_every_id
from pts.stored.model import RunView
from pts.stored.ocp_every_id import Every, IdVerdict
from pts.stored.ocp_stored import FAIL, PASS


@dataclass(frozen=True)
class Group:
    name: str
    about: str
    counts: dict[str, int]             # the whole group's, per verdict
    verdicts: tuple[IdVerdict, ...]     # the group's IDs, or only its judged ones (`judged`)

    @property
    def counts_text(self) -> str:
        return ", ".join(f"{n} {w}" for w, n in self.counts.items())


@dataclass(frozen=True)
class Reason:
    verdict: str
    why: str
    verdicts: tuple[IdVerdict, ...]


@dataclass(frozen=True)
class Section:
    every: Every

    @property
    def groups(self) -> list[Group]:
        return [Group(g, about, ocp_every_id.count(vs), tuple(vs))
                for g, about, vs in self.every.groups]

    @property
    def judged(self) -> list[Group]:
        """The groups with a PASS or FAIL, each with only those IDs."""
        return [Group(g.name, g.about, g.counts, mine) for g in self.groups
                if (mine := tuple(v for v in g.verdicts if v.verdict in (PASS, FAIL)))]

    def folded(self, word: str) -> list[Reason]:
        found: dict[str, list[IdVerdict]] = {}
        for v in self.every.of(word):
            found.setdefault(v.reason, []).append(v)
        return [Reason(word, why, tuple(vs)) for why, vs in found.items()]

    @property
    def not_applicable(self) -> list[Reason]:
        return self.folded(NOT_APPLICABLE)

    @property
    def not_checked(self) -> list[Reason]:
        return self.folded(NOT_CHECKED)


def section(run: RunView | None) -> Section | None:
    """The section of a run on an NVMe drive (None otherwise: ocp_every_id.summary)."""
    found = ocp_every_id.summary(run) if run is not None else None
    return Section(found) if found is not None else None
