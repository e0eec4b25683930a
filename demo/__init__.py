"""The demo LMS: a small, strict LTI 1.3 Advantage platform that plays Moodle/Canvas.

It talks to the tool only through the tool's public URLs. Start it in a test with
`DemoServer(tmp_path)`; mount it in an app with `create_demo_blueprint(DemoConfig(...))`.
"""

from demo.browser import LaunchFlowError, LaunchTrace, parse_form, run_launch
from demo.config import DemoConfig
from demo.lms_errors import DemoError
from demo.lms_models import (
    COURSE,
    INSTRUCTOR,
    LEARNER,
    STUDENTS,
    TEACHER,
    USERS,
    AutoPost,
    LineItem,
    Link,
    LoginInitiation,
    Score,
    Tool,
    User,
)
from demo.platform import DemoPlatform
from demo.server import BackgroundServer, DemoServer
from demo.web import create_demo_app, create_demo_blueprint, platform_of

__all__ = [
    "COURSE",
    "INSTRUCTOR",
    "LEARNER",
    "STUDENTS",
    "TEACHER",
    "USERS",
    "AutoPost",
    "BackgroundServer",
    "DemoConfig",
    "DemoError",
    "DemoPlatform",
    "DemoServer",
    "LaunchFlowError",
    "LaunchTrace",
    "LineItem",
    "Link",
    "LoginInitiation",
    "Score",
    "Tool",
    "User",
    "create_demo_app",
    "create_demo_blueprint",
    "parse_form",
    "platform_of",
    "run_launch",
]
