"""Debian's chromium, as the browser tests and benchmarks drive it through Playwright."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@contextmanager
def headless(*switches: str) -> Iterator[Browser]:
    """Start chromium headless with our switches and `switches`; close it after the block."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise AssertionError("playwright is missing: pip install -e '.[dev]' (it pins it)") from exc
    assert CHROMIUM.exists(), "Debian's chromium is missing: apt-get install -y chromium"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=[*CHROMIUM_ARGS, *switches]
        )
        try:
            yield browser
        finally:
            browser.close()
