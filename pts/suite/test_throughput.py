"""PTS Throughput test — pts-digest §7.2 (PTS 2.0.2 / PTS-E 1.1 TP test).

Measures steady-state SEQ throughput (decimal MB/s) at 100 % read and 100 % write, per block
size (PTS-E: 1024 KiB and 128 KiB; PTS-C: 1024 KiB), each a test of its own: purge, WIPC
(2x ActiveRange of SEQ writes at that block size, at the test's TC/QD), then rounds of a SEQ
read point and a SEQ write point until the write MB/s is steady over 5 rounds, at most 25.
`pytest pts/ -k throughput-128k` runs one block size.

Requires: --device (whole block device), --destructive, fio; root to open the device.
Typical duration at spec settings, per block size: WIPC (2x capacity / SEQ write speed) +
5 to 25 rounds of 2 min, i.e. 10 to 50 min plus WIPC; PTS-E runs two block sizes.
"""

import pytest

from pts import throughput
from pts.spec import SpecError, load_spec


def pytest_generate_tests(metafunc):
    """One test per block size of the spec (the run's --spec)."""
    if "block_size" not in metafunc.fixturenames:
        return
    try:
        sizes = load_spec(metafunc.config.option.spec).throughput.block_sizes
    except SpecError:
        sizes = ()     # without --device a bad --spec is not an error; nothing to run
    metafunc.parametrize("block_size", sizes, ids=[throughput.test_name(b) for b in sizes])


def pts_plan(settings, device, item=None):
    """--dry-run: the plan of the selected item's block size (all of them without one)."""
    callspec = getattr(item, "callspec", None)
    sizes = None if callspec is None else (callspec.params["block_size"],)
    return throughput.pts_plan(settings, device, sizes)


@pytest.fixture
def throughput_outcome(pts_run, block_size):
    """The measurement; anything that stops it is a pytest ERROR, not a spec failure."""
    return throughput.run_block_size(pts_run, block_size)


def test_throughput(throughput_outcome, block_size):
    assert throughput_outcome.steady, throughput_outcome.message
