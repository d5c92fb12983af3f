"""``session/set_config_option`` without its ``configId`` (acplint 0.1.0 sends ``optionId``: docs/clients.md)."""

from __future__ import annotations

import pytest

from zcode_acp.protocol.errors import INVALID_PARAMS, RpcError
from zcode_acp.protocol.session_config import validate_config_value


def test_a_missing_config_id_is_named_missing_not_unknown_none():
    with pytest.raises(RpcError) as raised:
        validate_config_value(None, None, True)
    error = raised.value
    assert error.code == INVALID_PARAMS
    assert error.message.startswith("Invalid params: configId is missing")
    assert "None" not in error.message and "mode, model, thought, planFirst" in error.message


def test_an_unknown_config_id_is_still_named():
    with pytest.raises(RpcError) as raised:
        validate_config_value(None, "test", True)
    assert "is unknown: 'test'" in raised.value.message


def test_a_set_mode_without_a_mode_id_says_it_is_missing_in_the_sessions_language():
    """acp-client sent ``session/set_mode`` with no ``modeId``: the answer said the value "must be one
    of" the modes, as if one had been sent (issue 32, the clients' run)."""
    import pytest

    from zcode_acp.protocol.errors import RpcError
    from zcode_acp.protocol.session_config import validate_mode

    with pytest.raises(RpcError) as missing:
        validate_mode(None)
    assert "modeId is missing" in missing.value.message and "build" in missing.value.message
    with pytest.raises(RpcError) as unknown:
        validate_mode("fast")
    assert "must be one of" in unknown.value.message
