"""Serving a WSGI app (the demo LMS, a fake tool) over real HTTP in a background thread."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from demo.config import DemoConfig
from demo.platform import DemoPlatform
from demo.web import create_demo_app, platform_of

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def _not_yet(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
    return [b"no app mounted yet"]


class _QuietHandler(WSGIRequestHandler):
    # One access-log line per request drowns test output; errors are still logged.
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class BackgroundServer:
    """A threaded werkzeug server on 127.0.0.1 and a free port; the app may come later.

    The port is known before the app exists, so an app can be built knowing its own URL.
    """

    def __init__(self, app: WSGIApp | None = None, host: str = "127.0.0.1", port: int = 0):
        self._server: BaseWSGIServer = make_server(
            host, port, app or _not_yet, threaded=True, request_handler=_QuietHandler
        )
        self.url = f"http://{host}:{self._server.port}"
        self._thread: threading.Thread | None = None

    def mount(self, app: WSGIApp) -> None:
        """Serve `app` from now on."""
        self._server.app = app

    def start(self) -> BackgroundServer:
        """Start serving in a daemon thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class DemoServer(BackgroundServer):
    """The demo LMS at <url>/demo over real HTTP; `platform` is its in-process API."""

    def __init__(self, state_dir: Path, mount_path: str = "/demo", **config: Any) -> None:
        super().__init__()
        try:
            self.config = DemoConfig(base_url=self.url + mount_path, state_dir=state_dir, **config)
            self.app = create_demo_app(self.config)
        except BaseException:
            self.stop()
            raise
        self.platform: DemoPlatform = platform_of(self.app)
        self.mount(self.app)

    def __enter__(self) -> DemoServer:
        self.start()
        return self
