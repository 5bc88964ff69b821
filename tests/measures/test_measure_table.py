"""The measure table: every trec_eval measure registered, in the module table.MODULE_OF names."""

from __future__ import annotations

from trecqr.measures import load_all
from trecqr.measures.table import FAMILY, MODULE_OF, NICKNAMES, TABLE


def test_every_table_measure_is_registered_by_its_family_module():
    registry = load_all()
    names = set(TABLE["9.0.8"]) | set(TABLE["10.0"])
    assert names <= set(registry)
    for name, measure in registry.items():
        assert type(measure).__module__ == f"trecqr.measures.{MODULE_OF[name]}", name
    assert sum(len(v) for v in FAMILY.values()) == len(MODULE_OF) == len(registry)


def test_nicknames_name_table_measures_only():
    for compat, nicks in NICKNAMES.items():
        for nick, members in nicks.items():
            assert set(members) <= set(TABLE[compat]), (compat, nick)


def test_10_only_measures_are_refused_under_908_with_a_hint(cli):
    result = cli(["eval", "-m", "rbp", "x", "y"])
    assert result.exit_code == 2
    assert "not in trec_eval 9.0.8; try --compat 10.0" in result.stderr
