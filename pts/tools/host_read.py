"""Everything a host reads of an NVMe drive for the OCP host rules (pts.stored.host_judge), in
one call: Identify Controller and Namespace, Get Features 02h and the supported capabilities of
the features the rules name, log 05h, which standard logs the drive answers, the FDP logs of
the namespace's Endurance Group when the drive claims FDP, the OCP log pages C1h, C3h, C4h
and C5h as bytes (pts.tools.ocp_page_facts), C6h (pts.tools.ocp_component_facts), C7h/C9h/CAh's
headers (pts.tools.ocp_header_facts), the UUID List
(pts.tools.uuid_facts), and the PCI
function (config space, BARs, link, CAP). Read-only: no Set Features, no self-test, nothing
written to the drive.

The run-time hook calls `read_all` at a moment (before the first test, after each round for
the FDP statistics) and appends `facts.as_record(moment)` to the ledger; the bytes are in
`folder` (the run folder's `host-facts/`), one file per structure and moment.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pts.tools.dssd_features import read_dssd_features
from pts.tools.nvme_facts import (
    Facts,
    read_fdp,
    read_features,
    read_identity,
    read_log_support,
)
from pts.tools.ocp_component_facts import read_components
from pts.tools.ocp_header_facts import read_headers
from pts.tools.ocp_page_facts import read_pages
from pts.tools.pci_facts import read_pci
from pts.tools.uuid_facts import read_uuid_facts

# Get Features SEL 3 of: Timestamp (NVMe-OPT-13), Power Limit (NVMe-OPT-21), Power Threshold
# (NVMe-OPT-18), Power Measurement (NVMe-OPT-19, NVMe-CFG-21)
FEATURES = (0x0E, 0x23, 0x24, 0x25, 0xC8, 0xC9)      # C8h: TEL-16..18; C9h: NVMe-AD-31/32
# logs whose support the STD-LOG rules ask (02h, 05h, 09h answered elsewhere too: read here
# once more so that each rule has its own answer)
# (log C1h is read whole with the OCP pages below, and given here as well)
LOGS = (0x01, 0x02, 0x03, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0D, 0x12, 0x13, 0x14, 0x19, 0x25,
        0x0E, 0x81, 0xC9)      # 0Eh, 81h: NVMe-AD-27/22; C9h: TEL-20/24
FDPS_BIT = 19      # Identify Controller CTRATT: Flexible Data Placement supported


def read_all(ctrl: str, namespace: str, folder: Path, moment: str, *,
             pci_device: Path | None = None, run: Callable | None = None,
             log_file: Path | None = None) -> Facts:
    """`ctrl` /dev/nvmeX, `namespace` /dev/nvmeXnY, `pci_device` the function's sysfs
    directory (/sys/class/nvme/nvmeX/device resolved; None: not read)."""
    folder.mkdir(parents=True, exist_ok=True)
    facts = Facts()
    kw = {"run": run, "log_file": log_file}
    read_identity(ctrl, namespace, folder, facts, **kw)
    read_features(ctrl, FEATURES, facts, **kw)
    read_dssd_features(ctrl, facts, **kw)   # DSSD C2h-CBh: SEL 0, 1, 3 (Get only)
    read_uuid_facts(ctrl, folder, facts, **kw)   # UUID List, granularity, USS bits
    ctrl_id, ns_id = facts.values.get("id_ctrl"), facts.values.get("id_ns")
    read_log_support(ctrl, LOGS, folder, facts, endgid=(ns_id or {}).get("endgid") or 1, **kw)
    read_pages(ctrl, folder, facts, **kw)       # OCP C1h, C3h, C4h, C5h as bytes, decoded
    read_components(ctrl, folder, facts, **kw)  # OCP C6h: header, then the whole page
    read_headers(ctrl, folder, facts, **kw)     # OCP C7h, CAh; C9h from its support read
    if ctrl_id and ns_id and ctrl_id["ctratt"] >> FDPS_BIT & 1 and ns_id["endgid"]:
        read_fdp(ctrl, ns_id["endgid"], folder, facts, moment, **kw)
    if pci_device is not None:
        read_pci(pci_device, folder, facts)
    return facts
