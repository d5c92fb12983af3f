"""The simulator's dialect names (sim/dialect.py): `cli016` for the 0.16 engine, `today` kept as its old name."""

import pytest

from zcode_acp.sim.dialect import Dialect


@pytest.mark.parametrize("name", ["cli016", "today", " Today "])
def test_the_016_engine_is_cli016_and_its_old_name_still_picks_it(monkeypatch, name):
    monkeypatch.setenv("ZCODE_SIM_DIALECT", name)
    monkeypatch.delenv("ZCODE_SIM_VERSION", raising=False)
    assert Dialect.from_env() == Dialect("cli016", "0.16.9")


def test_an_unknown_name_is_the_classic_dialect(monkeypatch, capsys):
    monkeypatch.setenv("ZCODE_SIM_DIALECT", "tomorrow")
    monkeypatch.delenv("ZCODE_SIM_VERSION", raising=False)
    assert Dialect.from_env().name == "classic"
    assert "unknown ZCODE_SIM_DIALECT 'tomorrow'" in capsys.readouterr().err
