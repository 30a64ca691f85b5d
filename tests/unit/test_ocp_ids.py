"""Every requirement ID of the OCP texts listed, none left out as a group (issue 49 §2):
pts.config.ocp_all_ids against the texts' own IDs (tests/support/ocp_text_ids.py: the rule,
and its counts per group as read from the texts), against issue 47's independent reading of
the tabulated groups (tests/support/ocp_spec_ids.py) and against the requirement table's
rows. Where the texts themselves are on the machine, the list is read from them again."""

from __future__ import annotations

from collections import Counter

import pytest

from pts.config import ocp_id_classes as C
from pts.config import ocp_requirements
from pts.config.ocp_all_ids import OcpId, Unclassified, all_ids, classify, resolve
from tests.support import ocp_spec_ids, ocp_text_ids

VERSIONS = ("2.0", "2.7")


@pytest.mark.parametrize("version", VERSIONS)
def test_every_id_of_the_text_once_in_text_order(version):
    ids = all_ids(version)
    assert len({e.id for e in ids}) == len(ids) == sum(ocp_text_ids.COUNTS[version].values())
    assert Counter(e.group for e in ids) == ocp_text_ids.COUNTS[version]   # every group
    assert list(dict.fromkeys(e.group for e in ids)) == list(ocp_text_ids.COUNTS[version])
    assert [e.at for e in ids] == sorted(e.at for e in ids)                # text order
    for group, count in ocp_spec_ids.COUNTS[version].items():   # issue 47's own reading
        assert sorted(e.id for e in ids if e.group == group) == \
            sorted(f"{group}-{n}" for n in range(1, count + 1)), group


def test_every_tabulated_row_is_listed_where_it_stands():
    listed = {e.key: e for v in VERSIONS for e in all_ids(v)}
    for key, row in ocp_requirements.TABLE.items():
        assert key in listed, key
        assert (listed[key].cls, listed[key].at, listed[key].subject) == \
            (C.TABULATED, row.line, row.subject), key
    assert {k for k, e in listed.items() if e.cls == C.TABULATED} == set(ocp_requirements.TABLE)


@pytest.mark.parametrize("version", VERSIONS)
def test_none_without_a_class_and_a_reason(version):
    for e in all_ids(version):
        assert e.cls in C.CLASSES and e.reason and e.subject and e.section, e
        assert (e.cls == C.TO_BE_JUDGED) <= (e.group in C.JUDGED_GROUPS), e
        assert bool(e.form_factor) == (e.cls == C.NOT_APPLICABLE and (
            e.group in C.FORM_FACTOR_OF or C.OVERRIDES.get(e.key) in C.FORM_FACTORS)), e
        assert not e.form_factor or e.form_factor in C.FORM_FACTORS
        if e.cls == C.NOT_CHECKED:
            assert e.reason == C.REASONS[C.OVERRIDES.get(e.key) or C.GROUPS[e.group][1]], e


def test_the_class_tables_name_only_what_the_texts_hold():
    groups = {e.group for v in VERSIONS for e in all_ids(v)}
    keys = {e.key for v in VERSIONS for e in all_ids(v)}
    assert set(C.GROUPS) | set(C.FORM_FACTOR_OF) | set(C.JUDGED_GROUPS) <= groups
    assert set(C.OVERRIDES) <= keys
    assert all(reason in C.REASONS for _, reason in C.GROUPS.values())
    assert all(key in C.REASONS or key in C.FORM_FACTORS for key in C.OVERRIDES.values())


def test_obsolete_ids_are_not_applicable():
    by_key = {e.key: e for v in VERSIONS for e in all_ids(v)}
    for key in [("2.7", "NVMe-CFG-4"), ("2.7", "SEC-37"), ("2.7", "UTIL-PI-7"),
                ("2.0", "TEL-6")]:
        assert (by_key[key].cls, by_key[key].reason) == (C.NOT_APPLICABLE,
                                                         C.REASONS["obsolete"]), key
    assert by_key[("2.7", "TRIM-3")].cls == C.TABULATED      # obsolete, but a row judges it


def test_a_form_factors_ids_depend_on_the_drive():
    m2 = next(e for e in all_ids("2.7") if e.group == "FFM2")
    assert (m2.cls, m2.form_factor) == (C.NOT_APPLICABLE, "M.2")
    assert resolve(m2, "U.2/U.3") == (C.NOT_APPLICABLE,
                                      "applies only to M.2 drives; this drive is U.2/U.3")
    assert resolve(m2, "M.2") == (C.NOT_CHECKED, C.REASONS["inspect"])
    cls, reason = resolve(m2, None)
    assert cls == C.NOT_CHECKED and "form factor is not known" in reason
    height = {e.id: e for e in all_ids("2.0")}["DP-CFG-5"]    # the text's M.2 height
    assert (height.form_factor, resolve(height, "E1.S")[0]) == ("M.2", C.NOT_APPLICABLE)
    sec = next(e for e in all_ids("2.7") if e.group == "SEC" and e.cls == C.NOT_CHECKED)
    assert resolve(sec, "M.2") == (sec.cls, sec.reason)
    with pytest.raises(ValueError, match="is not one of M.2, E1.S"):
        resolve(m2, "2.5 inch")


def test_an_unknown_group_or_version_is_refused():
    with pytest.raises(Unclassified, match="group 'XYZ' has no class; add it to"):
        classify("2.7", "XYZ-1", "XYZ", False)
    with pytest.raises(KeyError, match="no OCP requirement ID list for version '2.5'"):
        all_ids("2.5")


def test_ocp_requirements_exposes_the_list():
    assert ocp_requirements.all_ids is all_ids
    assert isinstance(ocp_requirements.all_ids("2.7")[0], OcpId)
