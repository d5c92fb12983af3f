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
