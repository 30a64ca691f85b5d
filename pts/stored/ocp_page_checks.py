"""How a row on an OCP vendor log page is judged (the machinery of pts.stored.ocp_page_rules,
whose docstring says what each verdict means): a page's fact as a rule sees it (Page), the
registration of a row (page_rule), and the generic checks of a row's bytes (present, reserved
bytes zero, reserved bits clear, the Log Page Version and GUID).

Reserved ranges are judged from the count of non-zero bytes the reader kept for each
(pts.tools.ocp_page_facts.page_fact), reserved bits by the masks of
pts.config.ocp_log_pages.RESERVED_BITS.
"""

from __future__ import annotations

from pts.config.ocp_all_ids import all_ids
from pts.config.ocp_log_c6 import C6
from pts.config.ocp_log_layout import RESERVED, LogField
from pts.config.ocp_log_pages import HEADER_IDS, PAGES, RESERVED_BITS
from pts.stored.host_rules import FAIL, NOT_CHECKED, PASS, RULES, V27, Evidence, rule

KEY = "ocp_pages"
LINE = {e.id: e.at for e in all_ids(V27)}
JUDGED = (0xC1, 0xC3, 0xC4, 0xC5)
READABLE = {**PAGES, C6.log_id: C6}      # C6h's rules: pts.stored.ocp_component_rules


def short(value) -> object:
    if isinstance(value, list) and len(value) > 8:
        return f"{value[:8]} ... ({len(value)} entries)"
    return value


def bytes_of(f: LogField) -> str:
    return f"{f.end - 1}:{f.offset}" if f.end - f.offset > 1 else str(f.offset)


class Page:
    """One page's fact as a rule sees it."""

    def __init__(self, facts: dict, log: int):
        self.log, self.page, self.name = log, READABLE[log], f"{log:02X}h"
        self.fact = facts[KEY][self.name]        # KeyError: not read (host_rules.judge)
        self.facts = facts

    def ev(self, where: str, value) -> Evidence:
        return Evidence(self.fact["command"], f"log {self.name} {where}", short(value))

    @property
    def fields(self) -> dict:
        return self.fact["decoded"]["fields"]

    def field_ev(self, name: str) -> Evidence:
        f = self.page.field(name)
        return self.ev(f"bytes {bytes_of(f)} ({name})", self.fields.get(name))

    def unusable(self, what: str, *, header: bool = False):
        """The verdict when the page gives no fields to judge, else None."""
        fact, said = self.fact, f"Get Log Page {self.name}"
        if "refused" in fact:
            return FAIL, f"{said}: {fact['refused']}, exit {fact['exit']}: no {what}", (
                self.ev("(refused)", f"{fact['refused']}, exit {fact['exit']}"),)
        if "bytes" not in fact:
            return NOT_CHECKED, f"{said} failed otherwise (evidence): {what}", (
                self.ev("(failed)", fact.get("error")),)
        if fact["decoded"] is None and not header:
            return FAIL, f"log {self.name} answered bytes that are not the {self.page.name} " \
                f"page ({fact['error']}): no {what}", (self.ev("header", (fact["version"],
                                                                        fact["guid"])),)
        return None


def page_rule(rid: str, log: int, check, *, header: bool = False, on_refusal: str = FAIL):
    """Register `check(page) -> (verdict, why, evidence)` for `rid` on log `log`. A rule
    the ID had (pts.stored.error_recovery_rules' on whether C1h answered) still judges the
    facts of a run recorded before the pages were read (no facts["ocp_pages"])."""
    before = RULES.get((V27, rid))

    def run(facts):
        if KEY not in facts and before is not None:
            return before[1](facts)
        p = Page(facts, log)
        what = f"{rid}'s field"
        settled = p.unusable(what, header=header)
        if settled is not None:
            if on_refusal != FAIL and settled[0] == FAIL:
                return on_refusal, settled[1].replace(f": no {what}", "") + \
                    ": what the row depends on is not known", settled[2]
            return settled
        return check(p)
    rule(V27, rid, LINE[rid])(run)


# --- the generic rows: present, reserved bytes, reserved bits, header --------------------


def present(names: tuple[str, ...]):
    def check(p: Page):
        evs = tuple(p.field_ev(n) for n in names)
        gone = [n for n in names if p.fields[n] is None]
        if gone:
            return FAIL, f"log page version {p.fact['version']} does not carry " + \
                ", ".join(gone), evs
        reserved = reserved_count(p, names)
        if reserved:
            return FAIL, f"{', '.join(names)}: {reserved} non-zero reserved bytes", evs
        return PASS, f"{', '.join(names)} given (page version {p.fact['version']}); what " \
            "it means after an error or across power cycles is not exercised by a read", evs
    return check


def reserved_count(p: Page, names: tuple[str, ...]) -> int:
    """Non-zero bytes in the reserved ranges of `names` (a STRUCT's entries' included)."""
    return sum(n for k, n in p.fact["reserved"].items()
               if any(k == x or k.startswith(x + "[") for x in names))


def zero(names: tuple[str, ...]):
    def check(p: Page):
        fields = [p.page.field(n) for n in names]
        carried = [f for f in fields if f.name in p.fact["reserved"]]
        evs = tuple(p.ev(f"bytes {bytes_of(f)} ({f.name})",
                         f"{p.fact['reserved'].get(f.name, '-')} non-zero") for f in fields)
        if not carried:
            return FAIL, f"log page version {p.fact['version']} does not have these bytes", evs
        n = reserved_count(p, tuple(f.name for f in carried))
        return (FAIL, f"{n} non-zero bytes where the text reserves them", evs) if n else \
            (PASS, "reserved bytes cleared to zero", evs)
    return check


def bits(name: str):
    def check(p: Page):
        mask, value = RESERVED_BITS[(p.log, name)], p.fields[name]
        ev = (p.field_ev(name),)
        if value is None:
            return FAIL, f"log page version {p.fact['version']} does not carry {name}", ev
        if value & mask:
            return FAIL, f"{name} 0x{value:x}: reserved bits 0x{value & mask:x} set " \
                f"(mask 0x{mask:x})", ev
        return PASS, f"{name} 0x{value:x}: reserved bits (0x{mask:x}) clear", ev
    return check


def version(want: int):
    def check(p: Page):
        v = p.fact["version"]
        ev = (p.ev(f"bytes {p.page.version_at + 1}:{p.page.version_at} (Log Page Version)",
                   v),)
        return (PASS if v == want else FAIL), f"Log Page Version {v} ({want} asked)", ev
    return check


def guid(p: Page):
    g = p.fact["guid"]
    ev = (p.ev(f"bytes {p.page.guid_at + 15}:{p.page.guid_at} (Log Page GUID)", g),)
    return (PASS if g == p.page.guid else FAIL), f"Log Page GUID {g} ({p.page.guid} " \
        "asked)", ev


def rows(log: int) -> dict[str, list[LogField]]:
    """Each v2.7 requirement ID of page `log` with its fields (every page version's)."""
    out: dict[str, list[LogField]] = {}
    for f in PAGES[log].fields:
        rid = f.req_id(V27)
        if rid is not None:
            out.setdefault(rid, []).append(f)
    return out


def generic(log: int, rid: str, fields: list[LogField]):
    """The generic check of a row: reserved bytes zero, reserved bits clear, or present."""
    if all(f.kind == RESERVED for f in fields):
        return zero(tuple(f.name for f in fields))
    names = tuple(f.name for f in fields if f.kind != RESERVED)
    if len(names) == 1 and (log, names[0]) in RESERVED_BITS:
        return bits(names[0])
    return present(names)


def register(custom: dict) -> None:
    for log in JUDGED:
        ver_id, want, guid_id = HEADER_IDS[(V27, log)]
        page_rule(ver_id, log, version(want), header=True)
        page_rule(guid_id, log, guid, header=True)
        for rid, fields in rows(log).items():
            if rid not in custom:
                page_rule(rid, log, generic(log, rid, fields))
    for rid, (log, check, on_refusal) in custom.items():
        page_rule(rid, log, check, on_refusal=on_refusal)


def then(*checks):
    """The checks in turn: the first that is not PASS, or the last; evidence of all."""
    def check(p: Page):
        evs: tuple = ()
        for c in checks:
            verdict, why, ev = c(p)
            evs += ev
            if verdict != PASS:
                return verdict, why, evs
        return verdict, why, evs
    return check


