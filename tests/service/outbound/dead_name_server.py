"""Outbound requests against a name server that never answers, measured in a net namespace.

Run as root under `unshare --mount --net` (tests/service/outbound/test_resolution.py does):
brings `lo` up, binds 127.0.0.53:53 (UDP and TCP) to read queries and answer none, mounts a
resolv.conf naming it over /etc/resolv.conf (in this mount namespace only), then times the
real client, a key set fetch and an AGS post, each with a 2 s deadline, and glibc's own
lookup. Prints one JSON object: what each ended with and how long it took.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import update

from core.lesson_scores import LessonScore
from core.platforms import ScorePost
from service.outbound import Client, Policy
from service.settings import Settings
from service.store.models import Platform
from testkit.factories import place, settings_in
from workers.context import WorkerContext

HOST = "never-answers.example.test"
DEADLINE_S = 2
CROWD = 20  # requests at once, more than the resolver's threads


def serve_silence() -> dict[str, int]:
    """Read DNS queries on 127.0.0.53:53 and never answer; count them."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    seen = {"queries": 0}
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.53", 53))
    tcp = socket.create_server(("127.0.0.53", 53))

    def drain() -> None:
        while True:
            udp.recvfrom(4096)
            seen["queries"] += 1

    def hold() -> None:
        held = []
        while True:
            conn, _ = tcp.accept()
            held.append(conn)  # accepted, read by nobody, answered never

    threading.Thread(target=drain, daemon=True).start()
    threading.Thread(target=hold, daemon=True).start()
    return seen


def timed(call: Callable[[], Any]) -> dict[str, Any]:
    """Run `call`; return how it ended (its error's type, reason and words) and its seconds."""
    started = time.monotonic()
    outcome: dict[str, Any] = {"error": None}
    try:
        call()
    except Exception as exc:  # noqa: BLE001  the outcome is what is measured
        outcome = {
            "error": type(exc).__name__,
            "reason": str(getattr(exc, "reason", "")),
            "message": str(exc),
        }
    outcome["seconds"] = round(time.monotonic() - started, 2)
    return outcome


def crowd(client: Any) -> dict[str, Any]:
    """Send CROWD requests at once; return the slowest and the resolver threads at most."""
    outcomes: list[dict[str, Any]] = []

    def one() -> None:
        outcomes.append(timed(lambda: client.get(f"https://{HOST}/")))

    threads = [threading.Thread(target=one) for _ in range(CROWD)]
    earlier = set(threading.enumerate())  # lookups of earlier requests, lingering still
    most = 0
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        lookups = [t for t in threading.enumerate() if t.name == "outbound-resolve"]
        most = max(most, len(set(lookups) - earlier))
        time.sleep(0.05)
    return {
        "reasons": sorted({o.get("reason", "") for o in outcomes}),
        "slowest": max(o["seconds"] for o in outcomes),
        "resolver_threads": most,
    }


def main(directory: Path) -> None:
    """Measure everything against the silent name server; print the JSON."""
    seen = serve_silence()
    resolv = directory / "resolv.conf"
    resolv.write_text("nameserver 127.0.0.53\n")
    subprocess.run(["mount", "--bind", str(resolv), "/etc/resolv.conf"], check=True)

    glibc: dict[str, Any] = {}
    lookup = threading.Thread(
        target=lambda: glibc.update(timed(lambda: socket.getaddrinfo(HOST, 443))), daemon=True
    )
    lookup.start()

    client = Client(Policy(deadline_s=DEADLINE_S))
    results: dict[str, Any] = {"get": timed(lambda: client.get(f"https://{HOST}/"))}
    results["crowd"] = crowd(Client(Policy(deadline_s=DEADLINE_S)))

    settings = settings_in(
        directory,
        "tool.db",
        redis_url=Settings.from_env().redis_url,
        outbound_allow="",
        outbound_deadline_s=DEADLINE_S,
    )
    context = WorkerContext.start(settings)
    results["key_set"] = timed(
        lambda: context.lti.key_sets.public_key(f"https://{HOST}/jwks", "k1", "RS256")
    )
    placed = place(context.store)
    with context.store.session() as session:
        session.execute(update(Platform).values(auth_token_url=f"https://{HOST}/token"))
    post = ScorePost(
        platform_id=placed.platform_id,
        line_item_url=f"https://{HOST}/lineitems/1/lineitem",
        user_sub="student-1",
        score=LessonScore(1.0, 2.0),
        timestamp=datetime.now(UTC),
    )
    poster = context.poster
    assert poster is not None
    context.lti.keys.current()  # the signing key is made on first use: not part of the post
    results["ags"] = timed(lambda: poster.post(post))

    lookup.join()
    results["glibc"] = glibc
    results["queries"] = seen["queries"]
    print(json.dumps(results))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
