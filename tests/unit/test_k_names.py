"""`pytest pts/ -k NAME` selects a PTS test by the name the docs give it (issue 40 §4): the
RWSW items (test_rwsw_wsat, ...) by rwsw-wsat, rwsw-streams, rwsw-replay and rwsw-dirth, as
a Throughput variant is by its id (throughput-128k). Collected by pytest itself, in one
child process (a collection per expression, without the start-up of a process each)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.helpers import REPO

EXPECTED = {
    "rwsw-wsat": ["test_rwsw_wsat"], "rwsw-streams": ["test_rwsw_streams"],
    "rwsw-replay": ["test_rwsw_replay"], "rwsw-dirth": ["test_rwsw_dirth"],
    "throughput-128k": ["test_throughput[throughput-128k]"],
    "rwsw and not rwsw-replay": ["test_rwsw_dirth", "test_rwsw_streams", "test_rwsw_wsat"],
}

CHILD = """
import contextlib, io, json, sys
import pytest

class Selected:
    def pytest_collection_finish(self, session):
        self.names = sorted(item.name for item in session.items)

out = {}
for expr in json.loads(sys.argv[1]):
    s = Selected()
    with contextlib.redirect_stdout(io.StringIO()):
        pytest.main(["pts/", "--collect-only", "-q", "-p", "no:cacheprovider", "-k", expr],
                    plugins=[s])
    out[expr] = s.names
print(json.dumps(out))
"""


def test_the_documented_names_select_their_items():
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(list(EXPECTED))],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == EXPECTED
