"""The [hir] and [xsr] spec tables (pts.config.spec_recovery): values of all three specs,
and bad values refused naming file and key."""

from __future__ import annotations

import pytest

from pts.config.spec import SpecError, available_specs, load_spec, specs_dir


@pytest.mark.parametrize("name", available_specs())
def test_every_spec_has_hir_and_xsr(name):
    s = load_spec(name)
    assert s.hir.block_size == 4096 and s.hir.write_seconds == 5
    assert s.hir.idle_seconds == (5, 10, 15, 25, 50) and s.hir.repetitions == 360
    assert s.hir.total_seconds() == 55_800                    # ~15.5 h (§7.5)
    assert [(g.pattern, g.block_size, g.hours) for g in s.xsr.groups] == [
        ("seq", 1 << 20, 8.0), ("rnd", 8192, 6.0), ("seq", 1 << 20, 8.0)]
    assert (s.xsr.recovery_band_pct, s.xsr.recovery_sustain) == (10.0, 5)


def broken(tmp_path, old: str, new: str):
    text = (specs_dir() / "pts-2.0.2-enterprise.toml").read_text()
    assert old in text
    path = tmp_path / "bad.toml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("old, new, message", [
    ("idle_seconds = [5, 10, 15, 25, 50]", "idle_seconds = [5, -1]",
     r"\[hir.idle_seconds\]: \[5, -1\] must be a non-empty list of whole seconds > 0"),
    ('patterns = ["seq", "rnd", "seq"]', 'patterns = ["seq", "zig", "seq"]',
     r"\[xsr.patterns\]: .* each must be 'seq' or 'rnd'"),
    ("group_hours = [8, 6, 8]", "group_hours = [8, 6]",
     r"\[xsr.group_hours\]: \[8, 6\] must be a list of 3"),
    ("recovery_band_pct = 10.0", "recovery_band_pct = 0",
     r"\[xsr.recovery_band_pct\]: 0.0 is out of range"),
    ("repetitions = 360 ", "repetitions = 0 ", r"\[hir.repetitions\]: 0 is out of range"),
])
def test_bad_values_name_file_and_key(tmp_path, old, new, message):
    with pytest.raises(SpecError, match=message):
        load_spec(str(broken(tmp_path, old, new)))
