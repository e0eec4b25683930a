"""A real tool and a real, independent LTI platform (the demo LMS), each on its own port."""

import pytest
import requests

from testkit.lms import make_lms


@pytest.fixture
def lms(tmp_path):
    found, tool_server = make_lms(tmp_path)
    yield found
    found.demo.stop()
    tool_server.stop()
    found.store.dispose()


@pytest.fixture
def browser():
    """A cookie-keeping HTTP client, as a browser would be."""
    with requests.Session() as session:
        yield session
