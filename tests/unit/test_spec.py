"""Spec files: the shipped ones load with the spec's numbers; every error names file and key."""

import pytest

from pts.config.spec import RwMix, SpecError, available_specs, load_spec, parse_size
from tests.support.helpers import REPO
from tests.support.ptsrun import spec_variant

SHIPPED = REPO / "specs" / "pts-2.0.2-enterprise.toml"


def test_shipped_specs():
    assert {"pts-2.0.2-enterprise", "pts-2.0.2-client", "pts-e-1.1"} <= set(available_specs())
    e = load_spec("pts-2.0.2-enterprise")
    assert [str(m) for m in e.iops.rw_mixes] == ["100/0", "95/5", "65/35", "50/50", "35/65",
                                                 "5/95", "0/100"]
    assert e.iops.block_sizes == (1048576, 131072, 65536, 32768, 16384, 8192, 4096, 512)
    assert [t.label for t in e.iops.tracking] == ["RND 4KiB 0/100", "RND 64KiB 65/35",
                                                  "RND 1024KiB 100/0"]
    assert (e.common.thread_count, e.common.queue_depth, e.common.active_range_pct,
            e.common.write_cache, e.common.point_seconds) == (4, 32, 100, "WCD", 60)
    rule = e.steady_state
    assert (rule.window_rounds, rule.max_data_excursion, rule.max_slope_excursion,
            rule.max_rounds) == (5, 0.20, 0.10, 25)
    assert (e.wipc.capacity_multiple, e.wipc.block_size) == (2, 131072)
    c = load_spec("pts-2.0.2-client")
    assert (c.common.thread_count, c.common.queue_depth, c.common.active_range_pct,
            c.common.write_cache) == (2, 16, 75, "WCE")
    assert [t.label for t in load_spec("pts-e-1.1").iops.tracking] == ["RND 4KiB 0/100"]
    for name in ("pts-2.0.2-enterprise", "pts-2.0.2-client", "pts-e-1.1"):
        probe = load_spec(name).purge_probe
        assert (probe.seconds, probe.block_size, probe.fob_ss_min_ratio) == (3, 4096, 1.1)


def test_shipped_throughput_latency_wsat():
    e, c = load_spec("pts-2.0.2-enterprise"), load_spec("pts-2.0.2-client")
    assert e.throughput.block_sizes == (1048576, 131072) and c.throughput.block_sizes == (
        1048576,)
    assert [str(m) for m in e.throughput.rw_mixes] == ["100/0", "0/100"]
    assert str(e.throughput.tracking_rw_mix) == "0/100"
    lat = e.latency
    assert [str(m) for m in lat.rw_mixes] == ["100/0", "65/35", "0/100"]
    assert lat.block_sizes == (8192, 4096, 512) and lat.tracking.label == "RND 4KiB 0/100"
    assert (lat.thread_count, lat.queue_depth, lat.percentile) == (1, 1, 99.999)
    assert (e.wsat.block_size, e.wsat.thread_count, e.wsat.queue_depth,
            e.wsat.capacity_multiple, e.wsat.max_hours) == (4096, 4, 32, 4, 24)
    assert (c.wsat.thread_count, c.wsat.queue_depth) == (2, 16)


def test_sizes_and_mixes():
    assert parse_size("0.5KiB") == 512 and parse_size("1MiB") == 1 << 20
    assert RwMix.parse("65/35").write_pct == 35
    for bad in ("4KB", "0.3B", "-4KiB"):
        with pytest.raises(ValueError):
            parse_size(bad)
    with pytest.raises(ValueError):
        RwMix.parse("60/30")


@pytest.mark.parametrize("old,new,needle", [
    ("queue_depth = 32", "queue_depth = 32\nqueue_dept = 3", "[common]: unknown key 'queue_dept'"),
    ("queue_depth = 32", "", "[common]: missing key 'queue_depth'"),
    ("queue_depth = 32", "queue_depth = \"32\"", "[common.queue_depth]"),
    ("queue_depth = 32", "queue_depth = 0", "[common.queue_depth]: 0 is out of range"),
    ('write_cache = "WCD"', 'write_cache = "off"', "[common.write_cache]"),
    ("max_data_excursion = 0.20", "max_data_excursion = 20", "[steady_state.max_data_excursion]"),
    ("max_rounds = 25", "max_rounds = 3", "[steady_state.max_rounds]"),
    ('"0.5KiB"]', '"0.5KB"]', "[iops.block_sizes[7]]: '0.5KB' is not a size"),
    ('"35/65"', '"35/75"', "[iops.rw_mixes[4]]"),
    ('{ rw_mix = "65/35", block_size = "64KiB" }', '{ rw_mix = "65/35", block_size = "48KiB" }',
     "[iops.tracking[1]]: RND 48KiB 65/35 is not a cell"),
    ("[wipc]", "[wipx]", "unknown table [wipx]"),
    ('segment = "enterprise"', 'segment = "server"', "[spec.segment]"),
    ('tracking_rw_mix = "0/100"', 'tracking_rw_mix = "50/50"',
     "[throughput.tracking_rw_mix]: 50/50 is not one of rw_mixes"),
    ('block_sizes = ["1024KiB", "128KiB"]', 'block_sizes = ["1024KiB", "1024KiB"]',
     "[throughput.block_sizes]: lists a value twice"),
    ('tracking = { rw_mix = "0/100", block_size = "4KiB" }',
     'tracking = { rw_mix = "0/100", block_size = "16KiB" }',
     "[latency.tracking]: RND 16KiB 0/100 is not a cell"),
    ("percentile = 99.999", "percentile = 100", "[latency.percentile]: 100.0 is out of range"),
    ("max_hours = 24", "max_hours = 0", "[wsat.max_hours]: 0.0 is out of range"),
    ("max_hours = 24", "max_hour = 24", "[wsat]: unknown key 'max_hour'"),
    ("[wsat]", "[wsatt]", "unknown table [wsatt]"),
    ("fob_ss_min_ratio = 1.1", "fob_ss_min_ratio = 0.9",
     "[purge_probe.fob_ss_min_ratio]: 0.9 is out of range (>= 1"),
    ("\nseconds = 3\n", "\nseconds = 0\n", "[purge_probe.seconds]: 0 is out of range (1..600)"),
    ("\nseconds = 3\n", "\n", "[purge_probe]: missing key 'seconds'"),
    ('block_size = "4KiB"\nfob', 'block_size = "4KB"\nfob', "[purge_probe.block_size[0]]"),
])
def test_errors_name_file_and_key(tmp_path, old, new, needle):
    path = spec_variant(tmp_path, {old: new}, count=1)
    with pytest.raises(SpecError) as err:
        load_spec(str(path))
    assert str(path) in str(err.value) and needle in str(err.value)


def test_invalid_toml_names_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[spec\nname=")
    with pytest.raises(SpecError, match="broken.toml: not valid TOML"):
        load_spec(str(path))


def test_unknown_spec_name_lists_choices():
    with pytest.raises(SpecError, match="unknown spec 'pts-9'.*pts-2.0.2-enterprise"):
        load_spec("pts-9")
