"""Data-plane faults on demand: what a flaky engine link does to a subscriber.

Armed from ``ZCODE_SIM_V4_FAULTS`` (comma-separated, each played once on the next frame
it fits; ``name*N`` plays it N times) or by a scenario step through ``Faults.arm_step``:

* ``gap``: the next deltas frame is not sent (the one after it starts past the client's seq);
* ``checksum``: the next frame goes out as fragments with a wrong CRC-32;
* ``stale_subscription``: the next frame is also sent under a subscription id the client
  no longer owns (it must be ignored);
* ``duplicate``: the next frame is sent twice;
* ``fragment``: the next frame is cut into fragments however small it is.
"""

from __future__ import annotations

import os
from collections import Counter

KNOWN = frozenset(("gap", "checksum", "stale_subscription", "duplicate", "fragment"))
ENV = "ZCODE_SIM_V4_FAULTS"


class Faults:
    def __init__(self, spec: str = "") -> None:
        self._armed: Counter[str] = Counter()
        self.played: Counter[str] = Counter()
        for item in (part.strip() for part in spec.split(",")):
            if not item:
                continue
            name, _, times = item.partition("*")
            self.arm(name, int(times) if times.isdigit() else 1)

    @classmethod
    def from_env(cls) -> Faults:
        return cls(os.environ.get(ENV, ""))

    def arm_step(self, step: dict[str, object]) -> None:
        """A scenario step ``{"type": "v4fault", "fault": "gap", "times": 2}`` (a runner's ``step_v4fault``)."""
        times = step.get("times", 1)
        self.arm(str(step.get("fault", "")), times if isinstance(times, int) and times > 0 else 1)

    def arm(self, name: str, times: int = 1) -> None:
        if name not in KNOWN:
            raise ValueError(f"unknown v4 fault {name!r} (known: {', '.join(sorted(KNOWN))})")
        self._armed[name] += times

    @property
    def pending(self) -> bool:
        """Some fault is armed and has not been played yet."""
        return any(count > 0 for count in self._armed.values())

    def take(self, name: str) -> bool:
        """True (once per arming) when ``name`` should be played now."""
        if self._armed[name] <= 0:
            return False
        self._armed[name] -= 1
        self.played[name] += 1
        return True
