"""The lesson page's code editor: the committed CodeMirror bundle and how it behaves.

The bundle (service/web/static/vendor/codemirror.js) is built by frontend/build.sh and
committed, so serving it needs no npm. These tests check that it is the file its
checksum names, that it fetches nothing from anywhere, that a clean build gives the
same bytes (marker npm), and that it works as an editor in a real browser (marker
browser).
"""

import hashlib
import json
import re
import shutil
import subprocess
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from testkit.chromium import headless

REPO = Path(__file__).resolve().parents[3]
FRONTEND = REPO / "frontend"
VENDOR = REPO / "service" / "web" / "static" / "vendor"
BUNDLE = VENDOR / "codemirror.js"
OUTPUTS = ("codemirror.js", "codemirror.LICENSES.txt", "codemirror.sha256")
# the accessibility audit script the browser tests inject (never served by the app)
A11Y = REPO / "tests" / "a11y"
AXE_OUTPUTS = ("axe.min.js", "axe.LICENSES.txt", "axe.sha256")

# XML namespace names: identifiers that happen to look like URLs; no browser fetches them.
INERT_URLS = {
    "http://www.w3.org/2000/svg",
    "http://www.w3.org/1999/xhtml",
    "http://www.w3.org/1999/xlink",
    "http://www.w3.org/XML/1998/namespace",
}
# what, in code, makes a browser load something: each is a bug in this bundle
FETCHING = {
    "dynamic import": r"(?<![\w$.])import\s*\(",
    "fetch()": r"(?<![\w$])fetch\s*\(",
    "XMLHttpRequest": r"XMLHttpRequest",
    "sendBeacon": r"sendBeacon",
    "WebSocket": r"WebSocket",
    "EventSource": r"EventSource",
    "importScripts": r"importScripts",
    "Worker": r"(?<![\w$])(?:Shared)?Worker\s*\(",
    "CSS @import": r"@import",
    "CDN host": r"//cdn|googleapis|unpkg|jsdelivr|cdnjs",
    "source map": r"sourceMappingURL",
}


def split_legal_comments(text: str) -> tuple[str, str]:
    """Split the bundle into its code and the legal comments esbuild puts after it.

    esbuild (--legal-comments=eof) appends license comments after the IIFE's final
    "})();". Everything after the last one must be comments only; if that last
    "})();" were itself inside a comment, the comments would count as code, which
    can only make the checks below stricter.
    """
    end = text.rfind("})();")
    assert end > 0, "the bundle is not an IIFE"
    code, rest = text[: end + len("})();")], text[end + len("})();") :]
    assert re.fullmatch(r"(?:\s*(?:/\*.*?\*/|//[^\n]*))*\s*", rest, re.S), (
        "something other than comments follows the bundle's IIFE"
    )
    return code, rest


def test_bundle_matches_its_checksum():
    recorded = (VENDOR / "codemirror.sha256").read_text().split()
    assert recorded[1:] == ["codemirror.js"]
    assert hashlib.sha256(BUNDLE.read_bytes()).hexdigest() == recorded[0]


def test_audit_script_is_the_pinned_axe_core_and_matches_its_checksum():
    recorded = (A11Y / "axe.sha256").read_text().split()
    assert recorded[1:] == ["axe.min.js"]
    script = (A11Y / "axe.min.js").read_bytes()
    assert hashlib.sha256(script).hexdigest() == recorded[0]
    pinned = json.loads((FRONTEND / "package.json").read_text())["devDependencies"]["axe-core"]
    assert script.startswith(f"/*! axe v{pinned}\n".encode())
    licenses = (A11Y / "axe.LICENSES.txt").read_text()
    assert f"axe-core@{pinned} (MPL-2.0)" in licenses
    assert "Mozilla Public License, version 2.0" in licenses
    # test-only: nothing under the app's static files is axe
    assert not [p for p in (REPO / "service").rglob("axe*.js")]


def test_bundle_is_one_minified_iife_exposing_the_mount_api():
    text = BUNDLE.read_text(encoding="utf-8")
    assert text.startswith("(()=>{")
    assert "window.CodeBlanksEditor={mount:" in text
    assert len(text) < 1_000_000, "the editor bundle has grown past 1 MB"
    for leak in ("/work/", "/tmp/", "/root/", "/home/", "node_modules"):
        assert leak not in text, f"the bundle names a build machine path: {leak}"


def test_bundle_fetches_nothing_from_the_network():
    code, _comments = split_legal_comments(BUNDLE.read_text(encoding="utf-8"))
    for what, pattern in FETCHING.items():
        found = re.search(pattern, code)
        assert found is None, (
            f"{what} in the bundle: ...{code[found.start() - 80 : found.end() + 80]}..."
        )
    # every URL in code must be an XML namespace name (license URLs live in the comments)
    urls = set(re.findall(r"https?://[^\s\"'`)<>\\]*", code))
    assert urls <= INERT_URLS, f"URLs in the bundle's code: {sorted(urls - INERT_URLS)}"
    # CSS url() may only hold inline data
    for css in re.finditer(r"url\(\s*([\"'`]?)([^\"'`)]{0,12})", code):
        assert css.group(2).startswith("data:"), f"CSS url() that loads a file: {css.group(0)}"


def test_licenses_name_every_bundled_package_of_the_lockfile():
    lock = json.loads((FRONTEND / "package-lock.json").read_text())
    licenses = (VENDOR / "codemirror.LICENSES.txt").read_text()
    listed = re.findall(r"^(\S+)@(\S+) \((\S+)\)$", licenses, re.M)
    assert listed, "no package in codemirror.LICENSES.txt"
    for name, version, _license in listed:
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
    names = {name for name, _, _ in listed}
    assert {"@codemirror/view", "@codemirror/state", "@codemirror/lang-python"} <= names
    assert "esbuild" not in names, "the bundler is not part of the bundle"


def test_frontend_pins_exact_versions():
    package = json.loads((FRONTEND / "package.json").read_text())
    assert package["private"] is True
    for section in ("dependencies", "devDependencies"):
        for name, version in package[section].items():
            assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} is not pinned: {version}"
    lock = json.loads((FRONTEND / "package-lock.json").read_text())
    assert lock["packages"][""]["dependencies"] == package["dependencies"]
    assert lock["packages"][""]["devDependencies"] == package["devDependencies"]


@pytest.mark.npm
@pytest.mark.slow
def test_a_clean_build_reproduces_the_committed_bundle(tmp_path):
    npm = shutil.which("npm")
    assert npm and shutil.which("node"), (
        "node and npm are needed to rebuild the editor bundle (Debian: apt-get install nodejs npm)"
    )
    work = tmp_path / "frontend"
    shutil.copytree(FRONTEND, work, ignore=shutil.ignore_patterns("node_modules"))
    out, axe = tmp_path / "out", tmp_path / "a11y"
    build = subprocess.run(
        ["bash", str(work / "build.sh"), str(out), str(axe)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, f"build.sh failed:\n{build.stdout}\n{build.stderr}"
    for name in OUTPUTS:
        assert (out / name).read_bytes() == (VENDOR / name).read_bytes(), (
            f"{name} differs from a clean build: run frontend/build.sh and commit its output"
        )
    for name in AXE_OUTPUTS:
        assert (axe / name).read_bytes() == (A11Y / name).read_bytes(), (
            f"tests/a11y/{name} differs from a clean build: run frontend/build.sh and commit it"
        )


# ---------------------------------------------------------------------------
# In a browser

LONG_LINE = "total = " + " + ".join(f"value_{i}" for i in range(20))
PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Editor test</title>
<link rel="icon" href="data:,">
<style>
  body { margin: 0; padding: 8px; font: 16px sans-serif; }
  form { display: flex; flex-direction: column; gap: 8px; }
</style>
</head>
<body>
<form method="post" action="/submit">
  <label for="code">Your solution</label>
  <textarea id="code" name="code" rows="10" cols="80">import math
# LONG
</textarea>
  <button type="submit" id="submit">Check my code</button>
</form>
<label for="given">Given code</label>
<textarea id="given">print("read only")
</textarea>
<script src="/static/codemirror.js"></script>
<script>
  window.changes = [];
  window.editor = CodeBlanksEditor.mount(document.getElementById("code"), {
    ariaLabel: "Python code for exercise 1",
    onChange: (text) => window.changes.push(text),
  });
  window.given = CodeBlanksEditor.mount(document.getElementById("given"), {readOnly: true});
</script>
</body>
</html>
""".replace("# LONG", LONG_LINE)


class _Site(ThreadingHTTPServer):
    daemon_threads = True
    posts: list[dict[str, list[str]]]


class _Handler(BaseHTTPRequestHandler):
    server: _Site

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 - http.server's naming
        if self.path == "/":
            self._send(200, PAGE.encode(), "text/html; charset=utf-8")
        elif self.path == "/static/codemirror.js":
            self._send(200, BUNDLE.read_bytes(), "text/javascript; charset=utf-8")
        else:
            self._send(404, b"not found", "text/plain")

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        self.server.posts.append(urllib.parse.parse_qs(body, keep_blank_values=True))
        self._send(
            200,
            b'<!doctype html><title>Saved</title><link rel="icon" href="data:,"><p>saved</p>',
            "text/html",
        )


@pytest.fixture
def site():
    server = _Site(("127.0.0.1", 0), _Handler)
    server.posts = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def browser():
    with headless() as found:
        yield found


def _active(page) -> str:
    return page.evaluate(
        "() => { const a = document.activeElement;"
        " return a.id || (a.closest('.cm-editor') ? 'editor' : a.tagName); }"
    )


@pytest.mark.browser
@pytest.mark.slow
def test_editor_in_a_narrow_browser(site, browser, screenshots):
    base = f"http://127.0.0.1:{site.server_address[1]}"
    context = browser.new_context(viewport={"width": 320, "height": 640})
    page = context.new_page()
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.goto(base + "/")

    # mounted: the textarea is hidden, the editor is labelled, both hold the same text
    editor = page.locator("form .cm-editor")
    content = page.locator("form .cm-content")
    assert editor.is_visible()
    assert not page.locator("#code").is_visible()
    assert content.get_attribute("aria-label") == "Python code for exercise 1"
    assert content.get_attribute("aria-readonly") == "false"
    assert page.locator("form .cm-lineNumbers").is_visible()
    value = "() => window.editor.getValue()"
    textarea = "() => document.getElementById('code').value"
    assert page.evaluate(value) == page.evaluate(textarea) == f"import math\n{LONG_LINE}\n"

    # Enter after a colon indents by 4 spaces
    content.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("def f():")
    page.keyboard.press("Enter")
    assert page.evaluate(value).endswith("\ndef f():\n    ")
    page.keyboard.type("return (1 + 2)")
    page.keyboard.press("Enter")
    assert page.evaluate(value).endswith("def f():\n    return (1 + 2)\n    ")
    assert page.evaluate(textarea) == page.evaluate(value)
    assert page.evaluate("() => window.changes.at(-1)") == page.evaluate(value)

    # undo and redo, the textarea following (how many steps depends on how
    # CodeMirror groups the typing)
    typed = page.evaluate(value)
    steps = 0
    while "return" in page.evaluate(value):
        assert steps < 6, "undo does not take the typing back"
        page.keyboard.press("Control+z")
        steps += 1
    assert page.evaluate(textarea) == page.evaluate(value)
    assert "def f():" in page.evaluate(value) or steps > 1
    for _ in range(steps):
        page.keyboard.press("Control+Shift+Z")
    assert page.evaluate(value) == typed == page.evaluate(textarea)

    # Tab indents, with spaces, and keeps the focus in the editor
    page.keyboard.press("Tab")
    assert page.evaluate(value).endswith("return (1 + 2)\n        ")
    assert _active(page) == "editor"
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(value).endswith("return (1 + 2)\n    ")
    page.keyboard.press("Backspace")
    before_tabbing = page.evaluate(value)
    assert before_tabbing.endswith("return (1 + 2)\n")

    # Escape, then Tab leaves the editor for the next focusable element, even after
    # a pause longer than CodeMirror's own 2 s; Shift-Tab leaves it backwards
    page.keyboard.press("Escape")
    time.sleep(2.5)
    page.keyboard.press("Tab")
    assert _active(page) == "submit"
    content.click()
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Tab")
    assert _active(page) != "editor"
    # an ordinary key after Escape cancels it: Tab indents again
    content.click()
    page.keyboard.press("Escape")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Tab")
    assert _active(page) == "editor"
    page.keyboard.press("Control+z")
    assert page.evaluate(value) == before_tabbing

    # the read-only editor takes the focus but not the typing
    given = page.locator(".cm-content").nth(1)
    assert given.get_attribute("aria-readonly") == "true"
    assert given.get_attribute("aria-label") == "Given code"
    given.click()
    page.keyboard.type("xyz")
    assert page.evaluate("() => window.given.getValue()") == 'print("read only")\n'

    # narrow: the page never scrolls sideways, the long line scrolls inside the editor
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 320
    box = editor.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 320
    scroller = "form .cm-scroller"
    assert page.eval_on_selector(scroller, "s => s.scrollWidth > s.clientWidth")
    assert page.eval_on_selector(scroller, "s => getComputedStyle(s).overflowX") == "auto"
    content.click()
    page.keyboard.press("Control+Home")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("End")
    assert page.eval_on_selector(scroller, "s => s.scrollLeft") > 0
    page.keyboard.press("Home")
    page.keyboard.press("Control+End")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("End")
    page.screenshot(path=str(screenshots / "editor.png"), full_page=True)

    # setValue replaces the text, reaches the textarea and onChange
    page.evaluate("() => window.editor.setValue('x = 1\\n' + window.editor.getValue())")
    edited = page.evaluate(value)
    assert edited.startswith("x = 1\nimport math\n")
    assert page.evaluate(textarea) == edited == page.evaluate("() => window.changes.at(-1)")

    # a plain form submit posts the edited text (browsers send CRLF line ends)
    with page.expect_navigation():
        page.locator("#submit").click()
    assert len(site.posts) == 1
    assert site.posts[0]["code"][0].replace("\r\n", "\n") == edited

    assert errors == []
    assert requests, "no request seen"
    outside = [url for url in requests if not url.startswith(base + "/")]
    assert outside == [], f"the page asked for something off the local server: {outside}"
    context.close()
