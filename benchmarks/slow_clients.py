"""/healthz latency while N slow clients trickle their requests' heads, never finishing them.

Usage: .venv/bin/python benchmarks/slow_clients.py [--tricklers N] [--every S] [--seconds D]
                                                  [--load K] [--url URL] [--json]
Without --url, starts `codeblanks serve` with its defaults (2 processes x 16 threads) on a
SQLite store in a temp dir and stops it at the end; with --url (e.g. the compose stack's
http://127.0.0.1:8000), measures that instead. Opens N connections that each send a request
line, then one more header line every S seconds (reopening any the server cuts), and for D
seconds asks /healthz, one request after another. With --load K, K more clients meanwhile
send GET /healthz as fast as they are answered, each on one kept-alive connection: the
throughput. Prints the latencies (p50, p95, max; no answer in 10 s counts as 10 s), the
throughput, and how many tricklers the server cut.
With --json, ends with one JSON line: {"tricklers", "cut", "probes", "p50_ms", "p95_ms",
"max_ms", "timeouts", "load", "per_s"}.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
TIMEOUT_S = 10.0
HEAD = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n"


def healthz_ms(url: str) -> float:
    """Return how long one GET /healthz took, in ms (TIMEOUT_S when it did not answer)."""
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=TIMEOUT_S) as answer:
            answer.read()
    except OSError:
        return TIMEOUT_S * 1000
    return (time.perf_counter() - started) * 1000


def trickle(host: str, port: int, count: int, every_s: float, stop: threading.Event) -> list[int]:
    """Keep `count` trickling connections open until `stop`; return [how many were cut]."""
    cut = [0]
    selector = selectors.DefaultSelector()

    def open_one() -> None:
        sock = socket.create_connection((host, port), timeout=10)
        sock.sendall(HEAD)
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)

    for _ in range(count):
        open_one()

    def run() -> None:
        line = 0
        next_send = time.monotonic() + every_s
        while not stop.is_set():
            for key, _ in selector.select(max(0.0, next_send - time.monotonic())):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    if sock.recv(65536):
                        continue  # an answer (408): its end comes next
                except BlockingIOError:
                    continue
                except OSError:
                    pass
                selector.unregister(sock)
                sock.close()
                cut[0] += 1
                open_one()
            if time.monotonic() >= next_send:
                line += 1
                for key in list(selector.get_map().values()):
                    try:
                        key.fileobj.send(f"X-Trickle-{line}: {line}\r\n".encode())  # type: ignore[union-attr]
                    except OSError:
                        pass
                next_send += every_s
        for key in list(selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]

    threading.Thread(target=run, daemon=True).start()
    return cut


def load(host: str, port: int, clients: int, stop: threading.Event) -> list[int]:
    """Start `clients` threads that GET /healthz on kept-alive connections; return [answers]."""
    answered = [0]

    def run() -> None:
        connection = http.client.HTTPConnection(host, port, timeout=TIMEOUT_S)
        while not stop.is_set():
            try:
                connection.request("GET", "/healthz")
                connection.getresponse().read()
                answered[0] += 1
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = http.client.HTTPConnection(host, port, timeout=TIMEOUT_S)
        connection.close()

    for _ in range(clients):
        threading.Thread(target=run, daemon=True).start()
    return answered


def serve(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start `codeblanks serve` on a free port over a fresh instance dir; return it and its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "CODEBLANKS_INSTANCE_DIR": str(directory), "CODEBLANKS_LOG_FORMAT": "text"}
    log = open(directory / "web.log", "wb")  # noqa: SIM115  closed with the process
    process = subprocess.Popen(
        [sys.executable, "-m", "service", "serve", "--port", str(port)],
        env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while healthz_ms(url) >= TIMEOUT_S * 1000 or process.poll() is not None:
        if time.monotonic() > deadline or process.poll() is not None:
            raise SystemExit(f"serve did not answer: {(directory / 'web.log').read_text()[-2000:]}")
        time.sleep(0.2)
    return process, url


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tricklers", type=int, default=200)
    parser.add_argument("--every", type=float, default=2.0, help="seconds between header lines")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to probe")
    parser.add_argument("--load", type=int, default=0, help="clients sending without pause")
    parser.add_argument("--url", help="a running web app (or proxy) instead of a fresh serve")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        process, url = (None, args.url.rstrip("/")) if args.url else serve(Path(tmp))
        stop = threading.Event()
        try:
            target = urlsplit(url)
            host, port = target.hostname or "", target.port or 80
            cut = trickle(host, port, args.tricklers, args.every, stop)
            answered = load(host, port, args.load, stop)
            took, started = [], time.monotonic()
            ended = started + args.seconds
            while time.monotonic() < ended:
                took.append(healthz_ms(url))
                time.sleep(0.05)
            per_s = answered[0] / (time.monotonic() - started)
        finally:
            stop.set()
            if process is not None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    print(f"serve did not stop in 30 s: {Path(tmp, 'web.log').read_text()[-3000:]}")
    took.sort()
    found = {
        "tricklers": args.tricklers,
        "cut": cut[0],
        "probes": len(took),
        "p50_ms": round(statistics.median(took), 1),
        "p95_ms": round(took[int(0.95 * (len(took) - 1))], 1),
        "max_ms": round(took[-1], 1),
        "timeouts": sum(1 for ms in took if ms >= TIMEOUT_S * 1000),
        "load": args.load,
        "per_s": round(per_s),
    }
    print(f"{url}: {args.tricklers} tricklers, a header line every {args.every:g} s")
    print(
        f"/healthz over {args.seconds:g} s: {found['probes']} probes, p50 {found['p50_ms']} ms,"
        f" p95 {found['p95_ms']} ms, max {found['max_ms']} ms, {found['timeouts']} timed out"
    )
    if args.load:
        print(f"throughput of {args.load} clients without pause: {found['per_s']} answers/s")
    print(f"tricklers cut by the server (and reopened): {found['cut']}")
    if args.json:
        print(json.dumps(found))


if __name__ == "__main__":
    main()
