"""The environment every child process of the bridge is given, with the bridge's secrets taken out."""

from __future__ import annotations

from collections.abc import Mapping

# Secrets are the bridge's, never a child's: the backend, every tool it runs (a model-written
# shell command included), the watchdog and the doctor's handshake must not see the remote token,
# where the hub listens, or the webhook's settings (its address's query holds a robot's key). Issue 29.
SECRET_VARIABLES = ("ZCODE_ACP_REMOTE", "ZCODE_ACP_HUB_", "ZCODE_ACP_PROJECT_ROOTS",
                    "ZCODE_ACP_PUBLIC_HOST", "ZCODE_ACP_NOTIFY_")


def scrubbed_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` less every remote-access and webhook variable, and any other whose value holds
    the token or the webhook's address: the one environment every child of the bridge is given."""
    secrets = [value for value in (environ.get("ZCODE_ACP_REMOTE_TOKEN", "").strip(),
                                   environ.get("ZCODE_ACP_NOTIFY_URL", "").strip()) if value]
    return {name: value for name, value in environ.items()
            if not name.startswith(SECRET_VARIABLES) and not any(secret in value for secret in secrets)}
