"""The engine's risk level is a word a person reads: in a Chinese session it is Chinese too (issue 29)."""

from zcode_acp.protocol.interactions import ask_reason


def test_the_risk_level_follows_the_sessions_language() -> None:
    params = {"reason": "This command changes files.", "riskLevel": "high"}
    assert ask_reason(params, "zh-CN") == "This command changes files.（风险：高）"
    assert ask_reason({"riskLevel": "medium"}, "zh-CN") == "风险：中"
    assert ask_reason(params, "en") == "This command changes files. (risk: high)"


def test_a_level_the_catalog_does_not_know_is_shown_as_the_engine_wrote_it() -> None:
    assert ask_reason({"reason": "r", "riskLevel": "unusual"}, "zh-CN") == "r（风险：unusual）"
