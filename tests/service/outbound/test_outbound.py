"""The outbound client against real servers on loopback: what it refuses, cuts and lets through.

A public-looking name is pointed at a loopback address by replacing `socket.getaddrinfo` for
that name only: the resolver's stand-in, as a hostile DNS record would answer.
"""

import datetime
import ipaddress
import socket
import ssl
import threading
import time
from urllib.parse import urlsplit

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from service.outbound import Allowed, Client, OutboundError, Policy, Reason, check_url, loopback
from service.outbound.addresses import kind
from service.web import extensions
from tests.service.outbound.raw_server import listen

SECRET = "internal-service-answer-7f3a"


@Request.application
def _app(request):
    if request.path == "/redirect":
        return Response("", status=302, headers={"Location": request.args["to"]})
    if request.path == "/big":
        return Response(SECRET * 100, status=500)
    if request.path == "/big-stream":  # no Content-Length: only reading finds the size
        return Response((SECRET.encode() * 10 for _ in range(100)), status=200)
    return Response(SECRET)


class Server:
    """A real HTTP (or HTTPS) server on a loopback address, counting connections."""

    def __init__(self, host="127.0.0.1", tls=None):
        self.connections = 0
        self._server = make_server(host, 0, _app, threaded=True, ssl_context=tls)
        original = self._server.get_request

        def counted():
            self.connections += 1
            return original()

        self._server.get_request = counted
        self.netloc = f"{host}:{self._server.server_port}"
        self.port = self._server.server_port
        self.url = f"{'https' if tls else 'http'}://{self.netloc}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self):
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def server():
    found = Server()
    yield found
    found.stop()


@pytest.fixture
def other():
    """A second server on another loopback address: what a redirect must not reach."""
    found = Server("127.0.0.2")
    yield found
    found.stop()


@pytest.fixture
def resolve(monkeypatch):
    """Point a host name at an address, as its DNS record would."""
    names = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        return real(names.get(host, host), port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return names.__setitem__


def client(allow="", deadline_s=5.0, max_bytes=1 << 20):
    return Client(Policy(Allowed.parse(allow), deadline_s, max_bytes))


def refusal(call):
    with pytest.raises(OutboundError) as info:
        call()
    return info.value


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "localhost",
        "0.0.0.0",  # reaches loopback on Linux
        "[::ffff:127.0.0.1]",  # IPv4-mapped
    ],
)
def test_a_loopback_url_is_refused_before_any_connection(server, host):
    url = f"http://{host}:{server.port}/"
    error = refusal(lambda: client().get(url))
    assert error.reason is Reason.REFUSED and "CODEBLANKS_OUTBOUND_ALLOW" in str(error)
    assert server.connections == 0


@pytest.mark.parametrize(
    ("url", "what"),
    [
        ("http://10.0.0.1/", "private"),
        ("https://192.168.1.10/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),  # cloud metadata
        ("http://100.64.0.1/", "shared"),
        ("http://224.0.0.1/", "multicast"),
        ("http://[fd00:ec2::254]/", "private"),
        ("http://[2002:a00:1::]/", "private"),  # 6to4 around 10.0.0.1
        ("http://[64:ff9b::a9fe:a9fe]/", "link-local"),  # NAT64 around 169.254.169.254
    ],
)
def test_private_and_metadata_addresses_are_refused(url, what):
    started = time.monotonic()
    error = refusal(lambda: client().get(url))
    assert error.reason is Reason.REFUSED and what in str(error)
    assert time.monotonic() - started < 1  # refused, not tried


def test_a_public_name_resolving_to_loopback_is_refused(server, resolve):
    resolve("lms.example.com", "127.0.0.1")
    error = refusal(lambda: client().get(f"http://lms.example.com:{server.port}/"))
    assert "lms.example.com resolves to 127.0.0.1, which is loopback" in str(error)
    assert server.connections == 0


@pytest.mark.parametrize(
    "to",
    [
        "http://{other}/",  # another loopback address
        "http://rebound.example.com:{other_port}/",  # a name resolving to it
        "http://169.254.169.254/latest/meta-data/",
    ],
)
def test_a_redirect_to_a_refused_address_is_refused(server, other, resolve, to):
    resolve("rebound.example.com", "127.0.0.2")
    target = to.format(other=other.netloc, other_port=other.port)
    error = refusal(
        lambda: client(server.netloc).get(server.url + "/redirect", params={"to": target})
    )
    assert error.reason is Reason.REFUSED
    assert server.connections == 1 and other.connections == 0


def test_redirects_within_the_rule_are_followed_a_few_times(server):
    answer = client(server.netloc).get(server.url + "/redirect", params={"to": "/"})
    assert answer.text == SECRET and len(answer.history) == 1
    loop = server.url + "/redirect?to=" + requests.utils.quote(server.url + "/redirect?to=/x")
    chain = loop
    for _ in range(4):
        chain = server.url + "/redirect?to=" + requests.utils.quote(chain)
    with pytest.raises(requests.TooManyRedirects):
        client(server.netloc).get(chain)


@pytest.mark.parametrize(
    ("allow", "host"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("127.0.0.1:{port}", "127.0.0.1"),
        ("127.0.0.0/8", "127.0.0.1"),
        ("localhost", "localhost"),
        ("moodle.school.lan", "moodle.school.lan"),
        ("moodle.school.lan:{port}", "moodle.school.lan"),
        (" 10.20.0.0/16 , moodle.school.lan. ", "moodle.school.lan"),
    ],
)
def test_allowed_entries_let_their_hosts_through(server, resolve, allow, host):
    resolve("moodle.school.lan", "127.0.0.1")
    answer = client(allow.format(port=server.port)).get(f"http://{host}:{server.port}/")
    assert answer.status_code == 200 and server.connections == 1


@pytest.mark.parametrize(
    ("allow", "host"),
    [
        ("127.0.0.1:1", "127.0.0.1"),  # another port
        ("127.0.0.2", "127.0.0.1"),
        ("moodle.school.lan:1", "moodle.school.lan"),
        ("moodle.school.lan", "other.school.lan"),  # the same address, another name
    ],
)
def test_an_entry_allows_only_what_it_names(server, resolve, allow, host):
    resolve("moodle.school.lan", "127.0.0.1")
    resolve("other.school.lan", "127.0.0.1")
    refusal(lambda: client(allow).get(f"http://{host}:{server.port}/"))
    assert server.connections == 0


@pytest.mark.parametrize(
    "entry", ["http://moodle.school.lan", "10.0.0.0/33", "moodle:port", "a b", "[::1]:x", "h:0"]
)
def test_a_bad_allow_entry_stops_start_up(entry):
    with pytest.raises(ValueError, match="CODEBLANKS_OUTBOUND_ALLOW"):
        Allowed.parse(f"127.0.0.1,{entry}")


@pytest.mark.parametrize("path", ["/big", "/big-stream"])
def test_an_oversized_answer_is_cut_and_not_shown(server, path):
    error = refusal(lambda: client(server.netloc, max_bytes=1000).get(server.url + path))
    assert error.reason is Reason.TOO_LARGE and "over 1000 bytes" in str(error)
    assert SECRET not in str(error)


def trickle(head, every_s):
    """A server that answers `head`, then one more byte every `every_s` seconds."""
    stop = threading.Event()

    def serve(conn):
        with conn:
            conn.recv(65536)
            conn.sendall(head)
            while not stop.wait(every_s):
                try:
                    conn.sendall(b"x")
                except OSError:
                    return

    listener = listen(serve)
    yield f"127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    listener.close()


@pytest.fixture
def trickling():
    yield from trickle(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", every_s=2)


@pytest.fixture
def trickling_tls():
    """A TLS server whose handshake record never ends: a byte a second of a 16 KiB record."""
    yield from trickle(b"\x16\x03\x03\x40\x00", every_s=1)


def test_a_trickling_server_is_cut_at_the_deadline(trickling):
    started = time.monotonic()
    # a per-read timeout of 5 s never fires against a byte every 2 s; the deadline does
    error = refusal(lambda: client(trickling, 3).get(f"http://{trickling}/", timeout=(3, 5)))
    elapsed = time.monotonic() - started
    assert error.reason is Reason.LATE and "took longer than 3 s" in str(error)
    assert 2.9 < elapsed < 4


def test_a_trickled_tls_handshake_is_cut_at_the_deadline(trickling_tls):
    started = time.monotonic()
    error = refusal(lambda: client(trickling_tls, 2).get(f"https://{trickling_tls}/"))
    assert error.reason is Reason.LATE and 1.9 < time.monotonic() - started < 3


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    """A certificate for "localhost" and the file that trusts it."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    return context, str(folder / "cert.pem")


def test_tls_checks_the_name_while_connecting_to_the_checked_address(tls, resolve):
    context, trusted = tls
    https = Server(tls=context)
    try:
        url = f"https://localhost:{https.port}/"
        assert client("localhost").get(url, verify=trusted).text == SECRET
        resolve("impostor.example.com", "127.0.0.1")
        with pytest.raises(requests.exceptions.SSLError):  # the certificate names localhost
            client("impostor.example.com").get(
                f"https://impostor.example.com:{https.port}/", verify=trusted
            )
    finally:
        https.stop()


def test_https_never_redirects_down_to_http_off_loopback(tls, server, resolve, caplog):
    context, trusted = tls
    https = Server(tls=context)
    resolve("lms.example.com", "127.0.0.1")
    try:
        target = f"http://lms.example.com:{server.port}/"
        error = refusal(
            lambda: client("localhost,lms.example.com").get(
                f"https://localhost:{https.port}/redirect", params={"to": target}, verify=trusted
            )
        )
        assert "localhost redirects to a URL that is not https" in str(error)
        # where it redirects is the server's word: in the log, never in the message
        assert "lms.example.com" not in str(error) and "lms.example.com" in caplog.text
        assert server.connections == 0
    finally:
        https.stop()


def test_the_tools_client_follows_the_settings(app, server):
    http = extensions.lti(app).http
    refusal(lambda: http.get(server.url))
    assert server.connections == 0


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("localhost", True),
        ("LOCALHOST.", True),
        ("127.0.0.1", True),
        ("127.3.4.5", True),
        ("::1", True),
        ("[::1]", True),
        ("10.0.0.1", False),
        ("localhost.example.com", False),
        ("::ffff:127.0.0.1", False),  # as ipaddress has it
        ("0.0.0.0", False),
    ],
)
def test_one_definition_of_loopback(host, expected):
    assert loopback(host) is expected


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://canvas.instructure.com/api/lti/security/jwks", True),
        ("http://127.0.0.1:8000/jwks", True),
        ("http://localhost/jwks", True),
        ("http://[::1]:8000/jwks", True),
        ("http://127.0.0.2/jwks", True),  # loopback is 127.0.0.0/8, here as in the demo LMS
        ("http://moodle.school.lan/jwks", False),
        ("http://10.0.0.1/jwks", False),
        ("ftp://lms.example.com/", False),
        ("https:///nohost", False),
    ],
)
def test_https_or_http_on_loopback(url, ok):
    if ok:
        check_url(url, "key set URL")
    else:
        with pytest.raises(ValueError, match="key set URL must be an https URL"):
            check_url(url, "key set URL")


@pytest.mark.parametrize(
    ("ip", "expected"),
    [
        ("93.184.215.14", None),
        ("2606:4700::1111", None),
        ("198.18.0.1", "private"),
        ("240.0.0.1", "private"),
        ("fe80::1", "link-local"),
        ("::", "unspecified"),
        ("::127.0.0.1", "reserved"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "private"),  # Teredo
    ],
)
def test_kinds_of_address(ip, expected):
    assert kind(ipaddress.ip_address(ip)) == expected


def test_a_url_of_another_netloc_form_is_allowed_by_its_host_port(server):
    assert client(urlsplit(server.url).netloc).get(server.url).status_code == 200
