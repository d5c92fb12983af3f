"""The Session actor and its parts (docs/architecture.md, "The Session")."""

from zcode_acp.actors.session.actor import Session

__all__ = ["Session"]
