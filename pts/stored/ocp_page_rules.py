"""The OCP requirements on the vendor log pages C1h (EREC-*), C3h (LMDATA-*, LMLOG-11..18), C4h
(DCLP-*, DSSDPSD-*) and C5h (URLP-*) of the v2.7 text, judged from the pages' bytes as
pts.tools.ocp_page_facts read and decoded them at a test's start (facts["ocp_pages"]["C3h"]).
Rules are added to pts.stored.host_rules.RULES; pts.stored.host_judge applies them. The EREC
rows of pts.stored.error_recovery_rules (which judged whether C1h answered) are judged here
from the decoded page instead: this module registers them after importing that one.

Every field row asks for a page the text requires (C1h 4.8.7.2, C3h LMLOG-12, C4h 4.8.10, C5h
4.8.12): refused by the drive as not supported, the row is FAIL with the drive's answer as the
evidence ("Get Log Page C3h: Invalid Field in Command (0x4002), exit 1"); bytes that are not
the page (another GUID, an unknown version) FAIL with the decoder's words; a read that failed
otherwise is NOT CHECKED. On a decoded page each row is judged by what the text asks of its
bytes: Log Page Version and GUID their values, reserved bytes and bits zero (the text's "Shall
be cleared to zero"), the rules between fields (C1h's recovery action bits, C3h's thresholds
A < B < C < D, C4h's capability bits against Identify Controller and its DSSD power state
descriptors against the NVMe power states, C5h's list sorted and counted). A field with no
value the text fixes is PASS when the page's version carries it, saying that what it means
after an error or over power cycles is not exercised by a read.
"""

from __future__ import annotations

from pts.stored import error_recovery_rules  # noqa: F401 - its EREC rows are replaced here
from pts.stored.host_rules import FAIL, NOT_APPLICABLE, NOT_CHECKED, PASS
from pts.stored.ocp_capability_rules import CAPABILITY_ROWS
from pts.stored.ocp_page_checks import Page, bits, register, then

# --- the rows with rules between fields -------------------------------------------------

def _erec_3(p: Page):
    v = p.fields["device_recovery_action_1"]
    ones = [b for b in range(8) if v >> b & 1]
    if len(ones) > 1:
        return FAIL, f"Device Recovery Action 1 0x{v:x}: {len(ones)} bits set (one at most)", \
            (p.field_ev("device_recovery_action_1"),)
    if v >> 6 & 1 and not p.fields["device_recovery_action_2"]:
        return FAIL, "bit 6 (user data loss) set with no bit of Device Recovery Action 2 set", \
            (p.field_ev("device_recovery_action_1"), p.field_ev("device_recovery_action_2"))
    return PASS, f"Device Recovery Action 1 0x{v:x}: at most one bit set", \
        (p.field_ev("device_recovery_action_1"),)


def _vendor_command(name: str):
    """EREC-6, -8, -9: cleared to zero unless Device Recovery Action 1 bit 2 is set."""
    def check(p: Page):
        action, v = p.fields["device_recovery_action_1"], p.fields[name]
        evs = (p.field_ev(name), p.field_ev("device_recovery_action_1"))
        if action >> 2 & 1:
            return PASS, f"{name} {v}: a vendor specific command is asked (bit 2 set)", evs
        return (PASS if v == 0 else FAIL), f"{name} {v} with Device Recovery Action 1 bit 2 " \
            "clear (zero asked)", evs
    return check


def _thresholds(p: Page):
    t = [p.fields[f"active_threshold_{x}"] for x in "abcd"]
    evs = tuple(p.field_ev(f"active_threshold_{x}") for x in "abcd")
    ok = t[0] < t[1] < t[2] < t[3]
    return (PASS if ok else FAIL), f"Active Thresholds A-D {t} (5 ms units): " + \
        ("A < B < C < D" if ok else "not A < B < C < D") + "; a configuration breaking the " \
        "order (Invalid Field in Command asked) is not sent by the suite", evs


def _telemetry_format(p: Page):
    """LMLOG-15..18 apply when LMDATA-1 bit 3 (Host Initiated Telemetry Format) is set."""
    v = p.fields["feature_status"]
    ev = (p.field_ev("feature_status"),)
    if not v >> 3 & 1:
        return NOT_APPLICABLE, "LMDATA-1 bit 3 (Host Initiated Telemetry Format Supported) " \
            "cleared: the row applies only when it is set", ev
    return NOT_CHECKED, "LMDATA-1 bit 3 set: the row is on the Latency Monitor Debug " \
        "Telemetry log (CAh), which the suite does not read", ev


def _one_trigger(p: Page):
    v = p.fields["debug_counter_trigger_source"]
    n = bin(v & 0x0FFF).count("1")
    ev = (p.field_ev("debug_counter_trigger_source"),)
    return (PASS if n <= 1 else FAIL), f"Debug Counter Trigger Source 0x{v:x}: {n} trigger " \
        "bit(s) set (one at most)", ev


def _answered(p: Page):
    return PASS, f"log {p.name} answered: {p.page.name} page version {p.fact['version']}, " \
        f"{p.fact['bytes']} bytes", (p.ev("header", (p.fact["version"], p.fact["guid"])),)


CUSTOM = {
    "EREC-3": (0xC1, then(bits("device_recovery_action_1"), _erec_3), FAIL),
    **{rid: (0xC1, _vendor_command(n), FAIL) for rid, n in (
        ("EREC-6", "vendor_specific_recovery_opcode"),
        ("EREC-8", "vendor_specific_command_cdw12"),
        ("EREC-9", "vendor_specific_command_cdw13"))},
    "LMDATA-32": (0xC3, then(bits("debug_counter_trigger_source"), _one_trigger), FAIL),
    "LMLOG-11": (0xC3, _thresholds, FAIL),
    "LMLOG-12": (0xC3, _answered, FAIL),
    "LMLOG-13": (0xC3, _answered, FAIL),
    **{f"LMLOG-{n}": (0xC3, _telemetry_format, NOT_CHECKED) for n in (15, 16, 17, 18)},
    **CAPABILITY_ROWS,
}
register(CUSTOM)

__all__ = ["CUSTOM"]
