"""Run the demo LMS alone: python -m demo [--port 5001] [--tool-url URL]."""

from __future__ import annotations

import argparse
from pathlib import Path

from demo.config import DemoConfig
from demo.web import create_demo_app


def main(argv: list[str] | None = None) -> None:
    """Serve the demo LMS at http://HOST:PORT/demo until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m demo", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5001)
    parser.add_argument("--state-dir", type=Path, default=Path("instance/demo"))
    parser.add_argument("--tool-url", default=None, help="the tool's public base URL")
    parser.add_argument("--pending", action="store_true", help="registrations await activation")
    args = parser.parse_args(argv)
    config = DemoConfig(
        base_url=f"http://{args.host}:{args.port}/demo",
        state_dir=args.state_dir,
        tool_url=args.tool_url,
        activate_registrations=not args.pending,
    )
    print(f"demo LMS: {config.url('/')}")
    create_demo_app(config).run(args.host, args.port, threaded=True)


if __name__ == "__main__":
    main()
