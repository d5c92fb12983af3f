"""The v4 stop fallback's deadline and notice (actors/session/v4/stopfallback.py)."""

from zcode_acp.actors.session.v4.stopfallback import StopFallback


def test_the_deadline_is_the_first_stops_and_a_later_stop_does_not_move_it() -> None:
    fallback = StopFallback(3.0)
    assert fallback.arm(1000.0) == 3.0
    assert fallback.arm(2000.0) == 2.0  # a second stop: still due at the first one's deadline
    assert not fallback.overdue(3999.0) and fallback.overdue(4000.0)


def test_the_notice_is_told_once_per_stopped_turn() -> None:
    fallback = StopFallback(3.0)
    fallback.arm(0.0)
    assert fallback.notice_due() and not fallback.notice_due()
    fallback.over()
    assert not fallback.overdue(10_000.0)
    fallback.arm(10_000.0)
    assert fallback.notice_due()
