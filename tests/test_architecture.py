"""The house rules of ARCHITECTURE.md and issue 14, held against the code.

Imports point downward: the worker loads no Flask and no web module; the shared layer
(settings, store, queue, logs, LTI, outbound) loads no Flask; SQL is
written only in service/store; no two modules share a name; messages are sent only through
service.queue's senders; the app's error handlers are registered in one place; the
benchmarks and testkit/ (the helpers they share with the tests) import nothing from tests/;
core reads no clock; the grade sync reads the store once and writes it twice (issue 28);
web code reaches the app's resources through service/web/extensions.py; CODEBLANKS_*
variables are read in service/settings.py only; bundles travel as records (a platform's
fields as PlatformFields, a student's request as an Asker), not as loose parameters.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from service.queue import TaskName

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "service", "workers", "demo")
WEB = ("flask", "werkzeug", "jinja2")
# the demo LMS is another program (the platform's side of LTI), with its own store
OTHER_PROGRAMS = ("demo/",)
TASK_NAMES = {name.value for name in TaskName}


def _parsed(folder: str) -> dict[str, ast.Module]:
    """Return the syntax tree of every Python file under `folder`, by its path in the repo."""
    found = {}
    for path in sorted((REPO / folder).rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        found[relative] = ast.parse(path.read_text(), relative)
    return found


SOURCES = {path: tree for package in PACKAGES for path, tree in _parsed(package).items()}


def _imports(tree: ast.Module) -> list[tuple[str, list[str], int]]:
    """Return (module, names, line) for every import of a module, at any depth."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [alias.name for alias in node.names], node.lineno))
    return found


def _loaded_by(statement: str, tmp_path: Path) -> list[str]:
    """Return the modules a fresh interpreter has loaded after running `statement`."""
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBLANKS_")}
    env.update(
        CODEBLANKS_INSTANCE_DIR=str(tmp_path / "instance"),
        CODEBLANKS_DATABASE_URL=f"sqlite:///{tmp_path / 'worker.db'}",
        CODEBLANKS_REDIS_URL="redis://127.0.0.1:1/0",  # never reached: nothing is sent
        CODEBLANKS_LOG_FORMAT="text",
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def _web(modules: list[str]) -> list[str]:
    return [
        m
        for m in modules
        if m.split(".")[0] in (*WEB, "demo")
        or m.startswith(("service.web", "service.dev", "service.cli"))
    ]


def test_the_worker_loads_neither_flask_nor_a_web_module(tmp_path):
    loaded = _loaded_by("import workers.app", tmp_path)
    assert "workers.tasks" in loaded and "service.store.database" in loaded
    assert _web(loaded) == []
    assert (tmp_path / "worker.db").exists()  # the worker's own start migrated the store


@pytest.mark.parametrize(
    "module",
    [
        "service.settings",
        "service.store",
        "service.store.submissions",
        "service.store.grades",
        "service.queue",
        "service.queue.broker",
        "service.logs",
        "service.lti.tool",
        "service.lti.ags",
        "service.lti.roster",
        "service.lti.registration",
        "service.lti.logins",
        "service.outbound",
    ],
)
def test_the_shared_layer_loads_no_flask(module, tmp_path):
    assert _web(_loaded_by(f"import {module}", tmp_path)) == []


def test_no_worker_module_imports_flask_or_the_web():
    wrong = [
        f"{path}:{line} imports {module}"
        for path, tree in SOURCES.items()
        if path.startswith("workers/")
        for module, _, line in _imports(tree)
        if module.split(".")[0] in (*WEB, "demo")
        or module.startswith(("service.web", "service.dev", "service.cli"))
    ]
    assert wrong == []


def test_the_store_settings_queue_lti_and_outbound_import_no_flask():
    shared = ("service/store/", "service/queue/", "service/lti/", "service/outbound/")
    files = ("service/settings.py", "service/logs.py", "service/instance.py")
    wrong = [
        f"{path}:{line} imports {module}"
        for path, tree in SOURCES.items()
        if path.startswith(shared) or path in files
        for module, _, line in _imports(tree)
        if module.split(".")[0] in WEB or module.startswith("service.web")
    ]
    assert wrong == []


def _knows_the_demo(path: str, module: str) -> bool:
    """Return whether a module of the tool, at `path`, imports `module` of the demo's side."""
    if module.startswith("service.demo"):  # its old home
        return True
    if module.split(".")[0] == "demo":
        return path.startswith("service/") and not path.startswith("service/dev/")
    return module.startswith("service.dev") and path.startswith("service/web/")


def test_the_tool_knows_nothing_of_the_demo_lms():
    """The demo LMS is another program, at the top level (demo/, beside core/, service/ and
    workers/): `codeblanks dev` mounts it (service/dev), and nothing else under service/
    imports it; the tool's own app factory and pages import neither it nor the dev
    supervisor, and nothing imports it from inside service/ (service.demo) any more."""
    wrong = [
        f"{path}:{line} imports {module}"
        for path, tree in SOURCES.items()
        for module, _, line in _imports(tree)
        if _knows_the_demo(path, module)
    ]
    assert wrong == []
    assert (REPO / "demo" / "__init__.py").is_file() and not (REPO / "service" / "demo").exists()


def test_core_imports_nothing_of_ours_but_core():
    wrong = [
        f"{path}:{line} imports {module}"
        for path, tree in SOURCES.items()
        if path.startswith("core/")
        for module, _, line in _imports(tree)
        if module.split(".")[0] in ("service", "workers", "demo")
    ]
    assert wrong == []


def test_core_reads_no_clock_and_draws_no_chance():
    """The time comes in as a parameter (a test sets it), and chance from the caller."""
    wrong = []
    for path, tree in SOURCES.items():
        if not path.startswith("core/"):
            continue
        for module, _, line in _imports(tree):
            if module.split(".")[0] in ("time", "random", "secrets"):
                wrong.append(f"{path}:{line} imports {module}")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("now", "utcnow", "today")
            ):
                wrong.append(f"{path}:{node.lineno} reads the clock (.{node.func.attr}())")
    assert wrong == []


# the grade sync's store side: one read, one write of the decision (which takes the pair's
# turn), one write of the LMS's answer; core.syncs decides between them
SYNC_STORE_CALLS = 3


def test_the_grade_sync_asks_the_store_one_read_and_two_writes():
    """workers/syncing.py calls at most SYNC_STORE_CALLS functions of service/store's modules
    (its Store's session and types aside): a sync that calls more decides between them."""
    tree = SOURCES["workers/syncing.py"]
    modules = {
        name for module, names, _ in _imports(tree) if module == "service.store" for name in names
    }
    direct = {
        name: module
        for module, names, _ in _imports(tree)
        if module.startswith("service.store.")
        and module not in ("service.store.database", "service.store.models")
        for name in names
    }
    calls = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = node.func
        if isinstance(called, ast.Attribute) and isinstance(called.value, ast.Name):
            if called.value.id in modules:
                calls.add(f"{called.value.id}.{called.attr}")
        elif isinstance(called, ast.Name) and called.id in direct:
            calls.add(f"{direct[called.id]}.{called.id}")
    assert len(calls) <= SYNC_STORE_CALLS, sorted(calls)


# what a platform's registration gives (service.store.platform_rows.PlatformFields)
PLATFORM_FIELDS = (
    "issuer",
    "client_id",
    "deployment_ids",
    "auth_login_url",
    "auth_token_url",
    "key_set_url",
    "name",
    "auto_add_deployments",
)


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    """Return a function's parameters, all kinds, without self, cls, *args and **kwargs."""
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    return [arg for arg in every if arg.arg not in ("self", "cls")]


def _functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_a_platforms_fields_travel_as_one_record():
    """No function takes three or more of a platform's fields one by one: the CLI, the admin
    page and dynamic registration make a PlatformFields, which goes to the store whole."""
    wrong = [
        f"{path}:{function.lineno} {function.name} takes {', '.join(sorted(loose))}"
        for path, tree in {**SOURCES, **_parsed("testkit")}.items()
        for function in _functions(tree)
        if len(loose := {a.arg for a in _parameters(function)} & set(PLATFORM_FIELDS)) >= 3
    ]
    assert wrong == []
    from service.store.platform_rows import PlatformFields  # after: old code has none

    assert PLATFORM_FIELDS == tuple(field.name for field in dataclasses.fields(PlatformFields))


# the student's actions and the views they feed; what they take loose instead of the Asker
STUDENT_ACTIONS = (
    "service/web/student/actions.py",
    "service/web/student/lesson_view.py",
    "service/web/student/course_view.py",
)
ASKER_PARTS = {"Store", "Catalog", "Settings", "SignedIn", "datetime"}
ACTION_PARAMETERS = 4  # the asker, and what the request names: answer's placement, question, answer


def _named(annotation: ast.expr) -> set[str]:
    """Return the type names an annotation mentions (`x.Store | None` mentions Store)."""
    return {
        node.id if isinstance(node, ast.Name) else node.attr
        for node in ast.walk(annotation)
        if isinstance(node, (ast.Name, ast.Attribute))
    }


def test_the_student_actions_take_the_asker():
    """A view makes the request's Asker once (actions.asker()) and hands it on: no public
    function of the student's actions takes the store, catalog, settings, user or time one
    by one, or more than ACTION_PARAMETERS parameters."""
    wrong = []
    for path in STUDENT_ACTIONS:
        for function in SOURCES[path].body:
            if not isinstance(function, ast.FunctionDef) or function.name.startswith("_"):
                continue
            parameters = _parameters(function)
            loose = sorted(
                f"{a.arg}: {ast.unparse(a.annotation)}"
                for a in parameters
                if a.annotation is not None and _named(a.annotation) & ASKER_PARTS
            )
            if loose or len(parameters) > ACTION_PARAMETERS:
                wrong.append(
                    f"{path}:{function.lineno} {function.name} takes {len(parameters)}: "
                    + ", ".join(loose)
                )
    assert wrong == []


def _top_functions(tree: ast.Module) -> set[str]:
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_no_function_of_ours_is_imported_under_another_name():
    """A function keeps its one name wherever it is called: a task's body, a command's or an
    action's is a verb of its own (workers.sweep.find_stuck under the `sweep` task,
    workers.syncing.sync_pair under `sync_grade`, regrading.queue_regrade under the
    `regrade` command), never one shared with its caller and imported `as` another; and no
    top-level function of workers/ shares its name with one of workers/tasks.py's tasks."""
    sources = {**SOURCES, **_parsed("testkit")}
    wrong = []
    for path, tree in sources.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            defined = sources.get(node.module.replace(".", "/") + ".py")
            if defined is None:
                continue
            wrong += [
                f"{path}:{node.lineno} imports {node.module}.{alias.name} as {alias.asname}"
                for alias in node.names
                if alias.asname not in (None, alias.name) and alias.name in _top_functions(defined)
            ]
    tasks = _top_functions(SOURCES["workers/tasks.py"])
    wrong += [
        f"{path} defines {name}, the name of a task"
        for path, tree in SOURCES.items()
        if path.startswith("workers/") and path != "workers/tasks.py"
        for name in sorted(_top_functions(tree) & tasks)
    ]
    assert wrong == []


def test_sql_is_written_only_in_the_store():
    """Outside service/store, sqlalchemy is imported for its exceptions only, and no code
    runs a statement (execute, scalar, scalars)."""
    wrong = []
    for path, tree in SOURCES.items():
        # the sandbox is a leaf that touches no database (its .execute() are its own)
        if path.startswith(("service/store/", "workers/sandbox/", *OTHER_PROGRAMS)):
            continue
        for module, _, line in _imports(tree):
            if module.split(".")[0] == "sqlalchemy" and module != "sqlalchemy.exc":
                wrong.append(f"{path}:{line} imports {module}")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("execute", "scalar", "scalars")
            ):
                wrong.append(f"{path}:{node.lineno} runs .{node.func.attr}()")
    assert wrong == []


def test_no_two_modules_share_a_name():
    by_name = defaultdict(list)
    for path in SOURCES:
        name = Path(path).name
        if name in ("__init__.py", "__main__.py") or "/migrations/versions/" in path:
            continue
        by_name[name].append(path)
    assert {name: paths for name, paths in by_name.items() if len(paths) > 1} == {}


def test_tasks_are_sent_only_through_the_queue_senders():
    """A task name or a send_task call outside service/queue would be a second way to send,
    with its own argument order."""
    wrong = []
    for path, tree in SOURCES.items():
        if path.startswith("service/queue/"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in TASK_NAMES:
                wrong.append(f"{path}:{node.lineno} names the task {node.value!r}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "send_task"
            ):
                wrong.append(f"{path}:{node.lineno} calls send_task")
    assert wrong == []


# who sends what follows a change: the queue's own senders, the one sender of the web app (its
# views hand over what their action returned), the tasks, the CLI's regrade, the sweep's
# timer, and the roster's ask, which keeps a failed send on the course for its teacher
SENDERS = {
    "service/web/extensions.py",
    "workers/tasks.py",
    "workers/sweep.py",
    "service/cli/regrade_command.py",
    "service/lti/roster.py",
}
SEND_NAMES = {"send", "send_grade", "send_sync", "send_roster_read", "send_sweep"}


def test_what_follows_an_action_is_returned_and_sent_in_one_place():
    """An action returns the messages that follow it; views and actions never send them."""
    wrong = []
    for path, tree in SOURCES.items():
        if path.startswith("service/queue/") or path in SENDERS:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "service.queue":
                sends = sorted(SEND_NAMES & {alias.name for alias in node.names})
                if sends:
                    wrong.append(f"{path}:{node.lineno} imports {', '.join(sends)}")
    assert wrong == []


def test_web_code_reaches_the_apps_resources_through_the_accessors():
    """What the app factory attached (settings, store, catalog, Celery app, LTI, streams) is
    read from `app.extensions` and `app.config["SETTINGS"]` in service/web/extensions.py only:
    one accessor per resource, typed, instead of a raw key in each caller."""
    wrong = []
    for path, tree in SOURCES.items():
        if path == "service/web/extensions.py" or path.startswith(OTHER_PROGRAMS):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "extensions":
                wrong.append(f"{path}:{node.lineno} reads .extensions")
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "config"
                and isinstance(node.slice, ast.Constant)
                and node.slice.value == "SETTINGS"
            ):
                wrong.append(f"{path}:{node.lineno} reads config['SETTINGS']")
    assert wrong == []


def _environ_reads(tree: ast.Module) -> list[tuple[int, str]]:
    """Return (line, name) for every read of a CODEBLANKS_* variable: os.environ[...],
    os.environ.get(...), os.getenv(...); a literal name only, as every reader writes it."""
    found = []
    for node in ast.walk(tree):
        key = None
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and ast.unparse(node.value) == "os.environ"
        ):
            key = node.slice
        elif (
            isinstance(node, ast.Call)
            and node.args
            and (ast.unparse(node.func) in ("os.environ.get", "os.getenv", "os.environ.pop"))
        ):
            key = node.args[0]
        if isinstance(key, ast.Constant) and str(key.value).startswith("CODEBLANKS_"):
            found.append((node.lineno, key.value))
    return sorted(found)


def test_settings_are_read_from_the_environment_in_service_settings_only():
    """Every CODEBLANKS_* variable is a field of Settings, read once by Settings.from_env.

    Building a child's environment (service/dev/supervisor.py, `codeblanks serve`) writes
    variables, which the child reads through its own Settings: a write is not a read."""
    wrong = [
        f"{path}:{line} reads {name} from the environment"
        for path, tree in SOURCES.items()
        if path != "service/settings.py"
        for line, name in _environ_reads(tree)
    ]
    assert wrong == []


def test_the_environment_rule_sees_every_way_to_read():
    """The rule above, against a module that reads each way and writes once."""
    tree = ast.parse(
        "import os\n"
        "a = os.environ['CODEBLANKS_A']\n"
        "b = os.environ.get('CODEBLANKS_B', 1)\n"
        "c = os.getenv('CODEBLANKS_C')\n"
        "os.environ['CODEBLANKS_D'] = '1'\n"
        "env = {**os.environ, 'CODEBLANKS_E': '1'}\n"
        "home = os.environ.get('HOME')\n"
    )
    assert _environ_reads(tree) == [(2, "CODEBLANKS_A"), (3, "CODEBLANKS_B"), (4, "CODEBLANKS_C")]


def test_the_error_handlers_are_registered_in_one_place():
    wrong = []
    for path, tree in SOURCES.items():
        if path == "service/web/boundary.py" or path.startswith(OTHER_PROGRAMS):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in (
                "register_error_handler",
                "errorhandler",
                "app_errorhandler",
            ):
                wrong.append(f"{path}:{node.lineno} registers an error handler")
    assert wrong == []


def test_the_tests_mirror_the_packages():
    """Every test directory is a package directory of the same path (or a helper folder of
    its parent's tests, named in HELPERS)."""
    helpers = {
        "tests/workers/sandbox/hostile",
        "tests/lessons",
        "tests/deploy",
        "tests/a11y",  # axe-core for the browser tests, copied by frontend/build.sh
    }
    wrong = []
    for directory in sorted((REPO / "tests").rglob("*")):
        if not directory.is_dir() or directory.name == "__pycache__":
            continue
        relative = directory.relative_to(REPO).as_posix()
        if relative in helpers or any(relative.startswith(h + "/") for h in helpers):
            continue
        if not (REPO / relative.removeprefix("tests/")).is_dir():
            wrong.append(relative)
    assert wrong == []


def test_the_benchmarks_and_testkit_import_nothing_from_the_tests():
    """A benchmark that imports a test module breaks when the tests are rearranged, and
    loads their conftest's fixtures with it: what both need lives in testkit/."""
    wrong = [
        f"{path}:{line} imports {module}"
        for folder in ("benchmarks", "testkit")
        for path, tree in _parsed(folder).items()
        for module, _, line in _imports(tree)
        if module.split(".")[0] == "tests"
    ]
    assert wrong == []
