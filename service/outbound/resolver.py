"""Name resolution within a request's deadline, in a bounded number of threads.

`getaddrinfo` cannot be interrupted, and the deadline's watchdog shuts sockets down, not
lookups: with a name server that never answers, a lookup took glibc's own timeouts (10 s
with resolv.conf's defaults, measured; 16 s reported with a search domain), past any
deadline, holding a web thread (a key set) or a worker (a grade). Here each lookup runs in a
thread of its own, and the request stops waiting when its time is up. The thread lingers
until glibc gives up; at most `threads` of them exist at once, so a dead name server costs
that many threads, not one per request: a request that finds them all busy waits for one
within its own time, then ends as late too.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

from service.outbound.addresses import address
from service.outbound.deadline import Deadline
from service.outbound.refusals import Reason, Stopped

Found = list[tuple[Any, ...]]


class Resolver:
    """getaddrinfo with a time limit; one per client."""

    def __init__(self, threads: int = 8) -> None:
        self.threads = threads
        self._free = threading.BoundedSemaphore(threads)

    def resolve(self, host: str, port: int, deadline: Deadline, late: str) -> Found:
        """Return getaddrinfo's answer for a TCP connection, within the deadline.

        Raise socket.gaierror as getaddrinfo does, or Stopped(LATE) saying `late` (which
        request ran out of time) once the deadline has passed.
        """
        if address(host) is not None:  # an IP literal: nothing to look up, nothing to wait on
            return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        left = deadline.left()
        if left <= 0 or not self._free.acquire(timeout=left):
            raise Stopped(
                Reason.LATE,
                f"{late}: resolving its host name (all {self.threads} lookup threads still "
                "wait on the name server)",
            )
        outcome: dict[str, Any] = {}
        done = threading.Event()

        def look_up() -> None:
            try:
                outcome["found"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except BaseException as exc:  # noqa: BLE001  handed to the waiting request
                outcome["error"] = exc
            finally:
                self._free.release()
                done.set()

        thread = threading.Thread(target=look_up, name="outbound-resolve", daemon=True)
        try:
            thread.start()
        except BaseException:
            self._free.release()
            raise
        if not done.wait(max(deadline.left(), 0)):
            raise Stopped(Reason.LATE, f"{late}: resolving its host name")
        if "error" in outcome:
            raise outcome["error"]
        found: Found = outcome["found"]
        return found
