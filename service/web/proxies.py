"""X-Forwarded-For and X-Forwarded-Proto, believed from the reverse proxy in front and no one else.

Behind a proxy every request comes from the proxy's address, over plain http: the admin
page's failed-password count would lump every client together, and a TLS launch would get
a login cookie without `SameSite=None; Secure` (service.web.lms.endpoints), which an LMS
iframe does not send back. So a request from an address of CODEBLANKS_TRUSTED_PROXIES
(addresses and CIDR ranges, comma-separated; loopback by default, where the compose file's
nginx sits) takes its client address and scheme from the last hop of those headers, as
Werkzeug's ProxyFix reads them; from any other address they are removed, so that nothing
below can read what a client wrote in them. gunicorn's own reading of them is off
(service/web/serving.py): one place decides.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from werkzeug.middleware.proxy_fix import ProxyFix

from service.web import extensions

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment
    from flask import Flask

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
FORWARDED = [f"HTTP_X_FORWARDED_{name}" for name in ("FOR", "PROTO", "HOST", "PORT", "PREFIX")] + [
    "HTTP_FORWARDED"
]


def networks(text: str) -> tuple[Network, ...]:
    """Read CODEBLANKS_TRUSTED_PROXIES; raise ValueError naming an entry that is no address."""
    found = []
    for raw in text.split(","):
        entry = raw.strip()
        if not entry:
            continue
        try:
            found.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(
                f"CODEBLANKS_TRUSTED_PROXIES: {entry!r} is not an IP address or CIDR range "
                "(e.g. 127.0.0.1, 10.0.0.0/8)"
            ) from None
    return tuple(found)


def init_app(app: Flask) -> None:
    """Put the middleware in front of the app, for the settings' trusted proxies."""
    trusted = networks(extensions.settings(app).trusted_proxies)
    app.wsgi_app = Proxies(app.wsgi_app, trusted)  # type: ignore[method-assign]


class Proxies:
    """WSGI middleware: forwarded headers applied from trusted peers, dropped from others."""

    def __init__(self, app: WSGIApplication, trusted: Iterable[Network]) -> None:
        self.app = app
        self.trusted = tuple(trusted)
        # one hop: the proxy appends its peer (nginx's $proxy_add_x_forwarded_for); what a
        # client wrote before that is its own say-so
        self.fixed = ProxyFix(app, x_for=1, x_proto=1)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Any:
        """Serve a request with its client address and scheme as the proxy tells them."""
        if self.believes(environ.get("REMOTE_ADDR", "")):
            return self.fixed(environ, start_response)
        for name in FORWARDED:
            environ.pop(name, None)
        return self.app(environ, start_response)

    def believes(self, peer: str) -> bool:
        """Return whether `peer` is one of the trusted proxies."""
        try:
            ip = ipaddress.ip_address(peer)
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # a dual-stack listener's IPv4 peer
        return any(ip.version == net.version and ip in net for net in self.trusted)
