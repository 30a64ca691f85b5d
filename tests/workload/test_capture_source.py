"""The live capture source's table of operations (pts.workload.capture.source.Source, a
typing.Protocol) filled by both sources, and the module that travels to a DUT host alone
(capture/tracefs.py, the body of remote.py's agent) importing nothing of the project.
No device, no root: read with inspect and ast."""

from __future__ import annotations

import ast
import inspect
import sys

import pytest

from pts.workload.capture import remote, source, tracefs
from pts.workload.capture.remote import RemoteInstance
from pts.workload.capture.source import Source
from pts.workload.capture.tracefs import Instance

OPERATIONS = [name for name, value in vars(Source).items()
              if callable(value) and (not name.startswith("_") or name in ("__enter__",
                                                                           "__exit__"))]


def test_the_table_names_the_operations_the_capture_uses():
    assert sorted(OPERATIONS) == sorted(["__enter__", "__exit__", "close", "formats", "start",
                                         "stop", "clock", "read_pages", "pages_to", "lost",
                                         "comms"])
    assert isinstance(vars(Source)["ncpus"], property)
    assert "kernel" in Source.__annotations__


@pytest.mark.parametrize("cls", [Instance, RemoteInstance], ids=["tracefs", "remote"])
def test_each_source_fills_every_operation(cls):
    """Every operation there, with the Protocol's parameters (names, kinds, defaults), and
    the ring buffer's CPUs and the traced host's kernel."""
    missing = [name for name in OPERATIONS if not callable(getattr(cls, name, None))]
    assert not missing, f"{cls.__name__} lacks {missing}"
    for name in OPERATIONS:
        want = inspect.signature(getattr(Source, name)).parameters
        got = inspect.signature(getattr(cls, name)).parameters
        assert [(p.name, p.kind, p.default) for p in got.values()] == \
            [(p.name, p.kind, p.default) for p in want.values()], f"{cls.__name__}.{name}"
    text = inspect.getsource(cls)
    # a read-only property of the Protocol: a property, or an attribute the source sets
    assert isinstance(getattr(cls, "ncpus", None), property) or "self.ncpus = " in text, \
        f"{cls.__name__} has no ncpus"
    assert "self.kernel = " in text, f"{cls.__name__} sets no kernel"


def test_the_travelling_module_imports_only_the_standard_library():
    """remote.py sends tracefs.py's source as the agent's body (python3 -c on the DUT host):
    an import of the project, or of anything beyond the standard library, fails there."""
    tree = ast.parse(inspect.getsource(tracefs))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "a relative import"
            found.add(node.module.split(".")[0])
    found -= {"__future__"}
    assert found and found <= sys.stdlib_module_names, sorted(found - sys.stdlib_module_names)
    # the agent as sent: tracefs.py's source and its loop, one script that compiles
    compile(inspect.getsource(tracefs) + remote.AGENT, "<agent>", "exec")


def test_the_protocol_module_stays_below_the_sources():
    """source.py names no source (both fill it; tracefs.py cannot import it)."""
    names = {n.module for n in ast.walk(ast.parse(inspect.getsource(source)))
             if isinstance(n, ast.ImportFrom)}
    assert names == {"__future__", "typing"}, names
