"""A bare TCP server for the outbound tests: each connection to it is served in a thread."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable


def listen(serve: Callable[[socket.socket], None]) -> socket.socket:
    """Listen on a free port of 127.0.0.1 and hand each connection to `serve` in a thread of
    its own, until the returned listener is closed."""
    listener = socket.create_server(("127.0.0.1", 0))

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener
