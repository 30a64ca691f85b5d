"""The names of test_start `parameters`: one name per option, whatever the test.

`--point-seconds` is `point_seconds` in every test: the length of a round's point (IOPS,
Throughput, Latency, HIR's and DIRTH's/CBW's rounds), of a WSAT sample and of an XSR interval.
Runs written before this was so stored it as `sample_seconds` (WSAT) and `interval_seconds`
(XSR); a stored run is read with those names as aliases, here only (pts.results.records.parse
calls `current` for every test_start), so no reader ever needs the old names
(docs/results-format.md, test_start).
"""

from __future__ import annotations

# older name -> the one name it is read as
ALIASES = {"sample_seconds": "point_seconds", "interval_seconds": "point_seconds"}


def current(parameters):
    """A test_start's `parameters` with the names of this version (anything that is not an
    object is given back as it is: the reader says what is wrong with it)."""
    if not isinstance(parameters, dict):
        return parameters
    out = {}
    for key, value in parameters.items():
        name = ALIASES.get(key, key)
        if name not in parameters or name == key:     # a current name wins over its alias
            out[name] = value
    return out
