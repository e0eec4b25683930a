"""Failure switches, so tests can watch the tool retry an LMS that errs, hangs or is down."""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Literal

# "token": the OAuth2 token endpoint; "ags": line items and scores; "results": a line item's
# results (what the LMS holds, read back); "nrps": memberships.
TARGETS = ("token", "ags", "results", "nrps")
Mode = Literal["error", "timeout"]


@dataclass
class _Failure:
    remaining: int
    mode: Mode
    delay_s: float
    status: int = 500


class Knobs:
    """Per-target failure plans and request counters, shared by all serving threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._plans: dict[str, _Failure] = {}
        self._down: tuple[float, int] | None = None  # (until, on time.monotonic; status)
        self.hits: Counter[str] = Counter()
        # Canvas's throttle: client id (None: any) -> service requests still to answer 403
        self._throttles: dict[str | None, int] = {}

    def fail(
        self,
        target: str,
        times: int = 1,
        mode: Mode = "error",
        delay_s: float = 5.0,
        status: int = 500,
    ) -> None:
        """Make the next `times` requests to `target` answer `status` (500, or 503 as a
        platform in maintenance does), or hang `delay_s` then 504."""
        if target not in TARGETS:
            raise ValueError(f"unknown failure target {target!r}; one of {TARGETS}")
        if mode not in ("error", "timeout"):
            raise ValueError(f"unknown failure mode {mode!r}; 'error' or 'timeout'")
        with self._lock:
            self._plans[target] = _Failure(times, mode, delay_s, status)

    def down_for(self, seconds: float, status: int = 502) -> None:
        """Answer every request to every target `status` for the next `seconds`: a Moodle
        whose PHP is stopped, behind its web server (502), or in maintenance (503)."""
        if not 500 <= status <= 599:
            raise ValueError(f"a platform that is down answers 5xx, not {status}")
        with self._lock:
            self._down = (time.monotonic() + float(seconds), status)

    def throttle(self, times: int = 1, client_id: str | None = None) -> None:
        """Make the next `times` service requests (token, AGS, NRPS) of `client_id` (None:
        of any client) meet Canvas's throttle: its bucket is per developer key, whatever the
        course or school (request_throttle.rb lti_advantage_client_id_and_cluster)."""
        if times < 0:
            raise ValueError(f"times must be 0 or more, not {times}")
        with self._lock:
            self._throttles[client_id] = times

    def throttled(self, client_id: str) -> bool:
        """Return whether this request of `client_id` is throttled (and count it off)."""
        with self._lock:
            for key in (client_id, None):
                if self._throttles.get(key, 0) > 0:
                    self._throttles[key] -= 1
                    self.hits["throttled"] += 1
                    return True
        return False

    def reset(self) -> None:
        """Cancel every planned failure, throttle and outage, and zero the counters."""
        with self._lock:
            self._throttles.clear()
            self._plans.clear()
            self._down = None
            self.hits.clear()

    def take(self, target: str) -> tuple[int, str] | None:
        """Count a request to `target`; return (status, message) if it must fail this time."""
        with self._lock:
            self.hits[target] += 1
            if self._down is not None and time.monotonic() < self._down[0]:
                return self._down[1], f"demo platform: down ({target})"
            plan = self._plans.get(target)
            if plan is None or plan.remaining <= 0:
                return None
            plan.remaining -= 1
            mode, delay_s, status = plan.mode, plan.delay_s, plan.status
        if mode == "timeout":
            # Sleep outside the lock so other requests (and other targets) still get served.
            time.sleep(delay_s)
            return 504, f"demo platform: simulated timeout on {target}"
        return status, f"demo platform: simulated failure on {target}"
