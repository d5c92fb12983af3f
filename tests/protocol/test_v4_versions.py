"""What the bridge claims about the engine versions on the v4 path (issue 31): only what is known.

Installed ZCode 3.14.4 (CLI 0.16.9) answers ``v4/*``; which release first did is not known, so no
floor is named. The newer public source adds the ``guarded`` mode, which 3.14.4 refuses
(``proto.invalidPayload``): the bridge never sends it.
"""

from __future__ import annotations

import pytest

from zcode_acp.actors.session.v4.settings import settings_command
from zcode_acp.protocol.errors import RpcError, cli_without_v4
from zcode_acp.protocol.i18n import LANGUAGES
from zcode_acp.protocol.session_config import SessionSettings
from zcode_acp.protocol.v4 import commands as v4


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_cli_that_refuses_v4_is_told_what_is_known_and_no_invented_floor(lang):
    error = cli_without_v4({"code": -32601, "message": "Method not found"}, lang)
    assert "0.16.9" in error.message and "3.14.4" in error.message and "ZCODE_ACP_ENGINE_API" in error.message
    assert "0.16.0" not in error.message
    assert "minimumVersion" not in error.data and error.data["knownToAnswer"] == "0.16.9"


def test_the_guarded_mode_of_the_newer_source_is_never_sent_to_the_engine():
    assert "guarded" not in v4.COLLABORATION_MODES
    with pytest.raises(ValueError):
        v4.switch_collaboration_mode("sess_1", "guarded")
    with pytest.raises(RpcError) as refused:
        settings_command("sess_1", SessionSettings(mode="build"), None, "mode", "guarded")
    assert refused.value.code == -32602
    assert not hasattr(v4, "set_highspeed_metrics"), "3.14.4 has no setHighspeedMetrics: no builder for it"
