"""Every message the actors exchange: small frozen value classes with typed fields.

A ``tell`` of one of these is the cheapest thing pykka does, and the hot path
(a streamed token) is nothing but tells. Each actor declares which classes it
handles with ``@handles(...)`` (``actors/base.py``), so an IDE goes from a
``tell`` to its handler, renaming a class is a type error, and telling an
actor something it does not handle raises at the sender.

Grouped by the actor that receives them. Replies are messages too: whoever
asks the Backend (or a client) something names the reply class it wants back
(``reply=...``), so answers arrive typed, never as tags compared as strings.

Messages that owe a client an answer derive from ``Owed``: when the handler
of one raises, the dispatcher answers it ``-32603`` (docs/architecture.md,
"Failures inside an actor").

``@message`` (``message_class.py``) makes each class what
``@dataclass(frozen=True, slots=True)`` would, at a tenth of the import cost;
they are not dataclasses, so ``dataclasses.replace``/``fields`` do not apply.
"""

# One module per receiver; every name is also importable from here, as before the split.
from zcode_acp.actors.messages.base import *  # noqa: F403
from zcode_acp.actors.messages.client import *  # noqa: F403
from zcode_acp.actors.messages.supervisor import *  # noqa: F403
from zcode_acp.actors.messages.notifier import *  # noqa: F403
from zcode_acp.actors.messages.backend import *  # noqa: F403
from zcode_acp.actors.messages.session import *  # noqa: F403
from zcode_acp.actors.messages.router import *  # noqa: F403
from zcode_acp.actors.messages.tasks import *  # noqa: F403
from zcode_acp.actors.messages.turn import *  # noqa: F403
from zcode_acp.actors.messages.idle import *  # noqa: F403
from zcode_acp.actors.messages.quota import *  # noqa: F403
