"""The OCP Hardware Component log page (C6h) read once at a test's start as bytes (issue 49
§1): its 64-byte header first (`nvme get-log CTRL --log-id=0xc6 --log-len=64 --raw-binary`,
read-only), then, when the header's Hardware Component Log Size says the page is longer,
the whole page at that size (the page has no fixed size: its descriptors are variable-length).
Into facts.values["ocp_pages"]["C6h"] in the form of pts.tools.ocp_page_facts (answered:
header, `decoded`, `reserved`; refused: nvme-cli's status text and exit status; QEMU 10
refuses it), with `components`: the descriptors walked from the bytes
(pts.tools.ocp_components.walk) and `walk_problem`. Judged by pts.stored.ocp_component_rules.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pts.config.ocp_log_c6 import C6, HEADER
from pts.tools import commands
from pts.tools.nvme_json import NvmeError
from pts.tools.ocp_components import log_size, walk
from pts.tools.ocp_log_read import PACKAGE, OcpLogNotSupported, get_log_argv, read_bytes
from pts.tools.ocp_page_facts import KEY, page_fact, status_text

NAME = "C6h"
# a larger size in the header is not read (a 16-byte field could ask for anything): said
MOST = 1 << 20


def read_components(ctrl: str, folder: Path, facts, *, run: Callable | None = None,
                    log_file: Path | None = None) -> None:
    if run is None:
        commands.require("nvme", PACKAGE)
    base, seen = run or commands.run, []

    def call(argv, **kw):
        seen.append(result := base(argv, **kw))
        return result
    out = facts.values.setdefault(KEY, {})
    path = folder / "log-c6h.bin"
    argv = " ".join(get_log_argv(ctrl, C6.log_id, HEADER))
    try:
        data = read_bytes(ctrl, C6.log_id, HEADER, path, run=call, log_file=log_file)
        size = log_size(data)
        if HEADER < size <= MOST:
            data = read_bytes(ctrl, C6.log_id, size, path, run=call, log_file=log_file)
    except OcpLogNotSupported:
        said = f"{seen[-1].stderr} {seen[-1].stdout}".strip()
        out[NAME] = {"command": argv, "exit": seen[-1].returncode,
                     "refused": status_text(said), "said": said[-200:]}
        return
    except NvmeError as exc:
        out[NAME] = {"command": argv, "exit": seen[-1].returncode if seen else None,
                     "error": str(exc)}
        return
    fact = {"command": argv, "exit": 0, "file": path.name, **page_fact(C6, data)}
    components, problem = walk(data, size)
    if size > MOST:
        problem = f"Hardware Component Log Size {size}: more than the {MOST} bytes read"
    fact.update(log_size=size, components=components, walk_problem=problem)
    out[NAME] = fact
