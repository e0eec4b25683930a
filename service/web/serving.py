"""gunicorn's settings module for `codeblanks serve` (`gunicorn -c python:service.web.serving`).

With the demo LMS mounted (CODEBLANKS_DEMO=1), the demo must be registered by dynamic
registration once the app answers: the master starts that as a process of its own, never a
thread, because it forks the web workers afterwards.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from service.settings import Settings

# gunicorn would take X-Forwarded-Proto from loopback peers by itself: the app decides whom to
# believe, and about which headers (service/web/proxies.py)
forwarded_allow_ips = ""


def when_ready(server: Any) -> None:
    """Start the demo LMS's registration once gunicorn listens (only with the demo on)."""
    if Settings.from_env().demo:
        subprocess.Popen([sys.executable, "-m", "service.dev.demo_mount"], stdin=subprocess.DEVNULL)
