import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from demo import DemoServer, LineItem, Tool
from demo.lms_keys import KEY_FILE, generate_private_pem
from tests.demo.fake_tool import FakeTool, new_private_pem
from tests.demo.scores import ALL_AGS


@pytest.fixture(scope="session")
def tool_pem() -> bytes:
    return new_private_pem()


@pytest.fixture(scope="session")
def platform_pem() -> str:
    return generate_private_pem()


@pytest.fixture
def state_dir(tmp_path: Path, platform_pem: str) -> Path:
    """A platform state dir holding a key already (RSA generation costs up to 0.3 s a test)."""
    path = tmp_path / "demo"
    path.mkdir(mode=0o700)
    fd = os.open(path / KEY_FILE, os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(platform_pem)
    return path


@pytest.fixture
def demo(state_dir: Path) -> Iterator[DemoServer]:
    """The demo LMS over real HTTP, fresh state per test."""
    with DemoServer(state_dir) as server:
        yield server


@pytest.fixture
def tool(tool_pem: bytes) -> Iterator[FakeTool]:
    fake = FakeTool(tool_pem)
    yield fake
    fake.server.stop()


@pytest.fixture
def registered(demo: DemoServer, tool: FakeTool) -> Tool:
    """The fake tool registered by hand, with every scope."""
    return tool.register_with(demo.platform)


@pytest.fixture
def item(demo: DemoServer, registered: Tool) -> LineItem:
    """A link of the fake tool with a line item out of 10."""
    link = demo.platform.add_link(registered.client_id, "Attention", score_maximum=10)
    return demo.platform.lineitems_of(link)[0]


@pytest.fixture
def auth(demo: DemoServer, tool: FakeTool, registered: Tool) -> dict[str, str]:
    """A bearer header with every AGS scope, obtained from the token endpoint."""
    return {"Authorization": f"Bearer {tool.access_token(demo.platform, ALL_AGS)}"}
