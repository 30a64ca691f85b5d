"""The OCP Datacenter NVMe SSD Specification's requirements a host can look at, keyed by
(spec version, requirement ID): a version's IDs are its own (the same ID can name another
requirement in another version, and a requirement can move to another ID), so an ID alone
names nothing and one version's numbers are never used for another. pts.stored.ocp_verdicts
gives each one a verdict (PASS, FAIL, NOT CHECKED) from a stored run; a requirement the suite
does not check is in the table with the reason, never left out.

The rows: pts/config/ocp_v27.py and ocp_v20.py (what a row is, the checks and what the
versions share: ocp_rows.py). Source of each version's rows: SPEC_TEXT; `line` is where the
ID stands in it (a line of v2.7's Markdown, a page of v2.0's PDF: the row's `locator`).
`subject` is this project's short wording of what the requirement is about, not the spec's
text. The groups tabulated (GROUPS) are those a host with nvme-cli and fio can reach (SMART /
Health and C0h logs, command timeouts, deallocation, NUSE, endurance, latency monitor). Every
ID of each text, these rows' among them, is listed with its class (TABULATED here, to be
judged, NOT APPLICABLE or NOT CHECKED and why) by all_ids(version) (pts.config.ocp_all_ids),
and judged, each one, by pts.stored.ocp_every_id.

v2.0 and v2.7 are tabulated; no v2.5 or 2.6 text was at hand to read IDs from, so `--ocp
2.5` is refused rather than answered with another version's numbers.

Values used in a verdict that the spec text states are CONFIRMED with their line; a value
this project had to interpret is a READING (pts.config.spec_readings' vocabulary) with why,
and every verdict resting on one says so.
"""

from __future__ import annotations

from pts.config import ocp_v20, ocp_v27
from pts.config.ocp_all_ids import OcpId, all_ids  # every ID of a text, with its class
from pts.config.ocp_rows import (
    C0_DSSD,
    C0_FIELD,
    C0_GUID,
    C0_VERSION,
    FORMAT_CRYPTO,
    FORMAT_NONE,
    FORMAT_UDE,
    LOGS_KEPT_OVER_PURGE,
    NUSE_AFTER_FORMAT,
    PERCENT_USED_KEPT,
    PURGE_NAMES,
    PURGE_TIME,
    SANITIZE_BLOCK,
    SANITIZE_CRYPTO,
    SMART_LOG_READ,
    OcpRequirement,
    PurgeLimit,
    Readings,
)
from pts.config.spec_readings import CONFIRMED

__all__ = [  # what readers use of the table (the row's parts are ocp_rows')
    "C0_DSSD", "C0_FIELD", "C0_GUID", "C0_VERSION", "FORMAT_CRYPTO", "FORMAT_NONE",
    "FORMAT_UDE", "LOGS_KEPT_OVER_PURGE", "NUSE_AFTER_FORMAT", "PERCENT_USED_KEPT",
    "PURGE_NAMES", "PURGE_TIME", "SANITIZE_BLOCK", "SANITIZE_CRYPTO", "SMART_LOG_READ",
    "OcpRequirement", "PurgeLimit", "Readings", "SPEC_TEXT", "VERSIONS", "GROUPS",
    "GUID", "C0_LOG_VERSION", "C0_GUID_VALUE", "DSSD_VERSION", "TABLE",
    "UnknownVersion", "requirements", "OcpId", "all_ids"]

SPEC_TEXT = {  # oldest first: VERSIONS[-1] is the newest
    "2.0": ("freews/general_parser@e094013be8cffa0fb60de487b04576f0ff10f9d0:source_doc/"
            "Datacenter NVMe SSD Specification v2.0r21.pdf (Version 2.0 (07302021))"),
    "2.7": ("circulardrives/cdi-grading-tool@427b743c734af2bfc017837fd964c770badf324b"
            ":docs/Datacenter NVMe SSD Specification v2.7 Final.md"),
}
VERSIONS = tuple(SPEC_TEXT)
GROUPS = ("SMART", "SLOG", "STD-LOG", "CTO", "TRIM", "NUSE", "ENDUD", "LMLOG")


# Values a check compares with, per version (CONFIRMED: the spec's line states it)
C0_LOG_VERSION = {"2.0": (3, CONFIRMED, "SMART-27, page 21: shall be 0003h"),
                  "2.7": (6, CONFIRMED, "SMART-27, line 1794-1797: shall be 0006h")}
GUID = "0xafd514c97c6f4f9ca4f2bfea2810afc5"    # AFD514C97C6F4F9CA4F2BFEA2810AFC5h as nvme-cli
C0_GUID_VALUE = {"2.0": (GUID, CONFIRMED, "SMART-28, page 21"),      # prints it
                 "2.7": (GUID, CONFIRMED, "SMART-28, line 1797-1799")}
# DSSD specification version, SMART-13 (bytes 103:98): major, minor, point, errata
DSSD_VERSION = {
    "2.0": ({"major_version": 2, "minor_version": 0, "point_version": 0, "errata_version": 0},
            "SMART-13, page 18"),
    "2.7": ({"major_version": 2, "minor_version": 7, "point_version": 0, "errata_version": 0},
            "SMART-13, line 1396-1400")}

TABLE: dict[tuple[str, str], OcpRequirement] = {
    r.key: r for r in (*ocp_v20.ROWS, *ocp_v27.ROWS)}


class UnknownVersion(ValueError):
    pass


def requirements(version: str) -> list[OcpRequirement]:
    """The table's rows of one spec version, in the table's order."""
    if version not in VERSIONS:
        raise UnknownVersion(
            f"no OCP Datacenter NVMe SSD requirement table for version {version!r}; "
            f"tabulated: {', '.join(VERSIONS)} (IDs differ between versions, so another "
            "version's numbers are never used in its place)")
    return [r for r in TABLE.values() if r.version == version]
