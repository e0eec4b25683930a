"""The house rules of ARCHITECTURE.md and issue 14, held against the code.

Imports point downward: the worker loads no Flask and no web module; the shared layer
(settings, store, queue, logs, LTI, outbound) loads no Flask; SQL is
written only in service/store; no two modules share a name; messages are sent only through
service.queue's senders; the app's error handlers are registered in one place; the
benchmarks and testkit/ (the helpers they share with the tests) import nothing from tests/;
core reads no clock; the grade sync reads the store once and writes it twice (issue 28); a
verdict is stored once, as its message and its cases (issue 28);
web code reaches the app's resources through service/web/extensions.py; CODEBLANKS_*
variables are read in service/settings.py only; no template or module compares a value with
a quoted status word, and the words of each status are one table keyed by its enum's members,
in service/web/labels.py; words said later are core.messages texts (no lazy_gettext, one N_),
and every refusal is a core.errors.Refusal that only the boundary answers; bundles travel as
records (a platform's fields as PlatformFields, a student's request as an Asker), not as
loose parameters (issue 28).
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from jinja2 import Environment, nodes

from core.placements import Reveal
from core.runs import RunStatus
from service.queue import TaskName
from service.store.models import PracticeStatus, SubmissionStatus, SyncStatus

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "service", "workers", "demo")
WEB = ("flask", "werkzeug", "jinja2")
# the demo LMS is another program (the platform's side of LTI), with its own store
OTHER_PROGRAMS = ("demo/",)
TASK_NAMES = {name.value for name in TaskName}
# the enums whose members the pages show: their words are never spelled out to compare with
# or to key a table by (a view model's property says what a status means, labels.py words it)
PAGE_ENUMS = (RunStatus, SubmissionStatus, PracticeStatus, SyncStatus, Reveal)
WORDS = {member.value for kind in PAGE_ENUMS for member in kind}
TEMPLATES = REPO / "service" / "web" / "templates"
LABELS = "service/web/labels.py"
TRANSLATING = {"_", "_l", "gettext", "ngettext", "pgettext", "lazy_gettext", "lazy_pgettext"}


def _parsed(folder: str) -> dict[str, ast.Module]:
    """Return the syntax tree of every Python file under `folder`, by its path in the repo."""
    found = {}
    for path in sorted((REPO / folder).rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        found[relative] = ast.parse(path.read_text(), relative)
    return found


SOURCES = {path: tree for package in PACKAGES for path, tree in _parsed(package).items()}
SUPPORT = ("tests", "testkit", "benchmarks")  # what checks the product, and measures it


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
        "service.wording",
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
    files = ("service/settings.py", "service/logs.py", "service/instance.py", "service/wording.py")
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
    "token_audience",
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
    "service/web/student/attempt_view.py",
    "service/web/student/practice_actions.py",
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
# timer, and the roster's and the results' asks, which keep a failed send on the course (the
# placement) for its teacher
SENDERS = {
    "service/web/extensions.py",
    "workers/tasks.py",
    "workers/sweep.py",
    "service/cli/regrade_command.py",
    "service/lti/roster.py",
    "service/lti/results.py",
}
SEND_NAMES = {
    "send",
    "send_grade",
    "send_practice",
    "send_sync",
    "send_roster_read",
    "send_results_read",
    "send_sweep",
}


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


# where the app's resources are attached and read (the accessors), and where a test swaps one
RESOURCE_KEEPERS = {"service/web/extensions.py", "testkit/apps.py"}


def test_web_code_reaches_the_apps_resources_through_the_accessors():
    """What the app factory attached (settings, store, catalog, Celery app, LTI, streams) is
    read from `app.extensions` and `extensions.settings(app)` in service/web/extensions.py only:
    one accessor per resource, typed, instead of a raw key in each caller; the tests, their
    kit and the benchmarks too (a test that changes one swaps it with testkit.apps.swap)."""
    wrong = []
    everything = {**SOURCES, **{p: t for f in SUPPORT for p, t in _parsed(f).items()}}
    for path, tree in everything.items():
        if path in RESOURCE_KEEPERS or path.startswith(OTHER_PROGRAMS):
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


# ---- words and refusals (issue 28, points 1 and 2) ------------------------------------------

BOUNDARY = "service/web/boundary.py"
REFUSAL_NAME = re.compile(r"(Refused|Problem|Error)$")
# a refusal caught by a view that shows it on its own page, and why
SHOWN_IN_PLACE = {
    ("service/web/teacher/regrade_pages.py", "RegradeProblem"): "beside the regrade's form",
}
# classes named like a refusal that are faults of ours, and why
NOT_REFUSALS = {
    "ScoreRefused": "a GraderError: an LMS refusing a score is retried, never a user's answer",
}


def test_words_for_later_are_core_messages_only():
    """One deferred text: no lazy_gettext, no Said/_l of service.lti.words, one N_."""
    wrong = []
    for path, tree in SOURCES.items():
        for module, names, line in _imports(tree):
            if (
                module == "service.lti.words"
                or "lazy_gettext" in names
                or "N_" in names
                and (module != "core.messages")
            ):
                wrong.append(f"{path}:{line} imports {module} {names}")
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in ("N_", "_l"):
                if (path, node.name) != ("core/messages.py", "N_"):
                    wrong.append(f"{path}:{node.lineno} defines {node.name}")
    assert wrong == []
    keywords = re.findall(r"-k (\S+)", (REPO / "scripts/i18n.sh").read_text())
    assert sorted(keywords) == ["N_", "say", "say_n:1,2"], keywords
    assert not (REPO / "service/lti/words.py").exists()


def _classes() -> dict[str, list[str]]:
    """Return the modules defining each class of ours, by its name."""
    found: dict[str, list[str]] = defaultdict(list)
    for path, tree in SOURCES.items():
        if path.startswith(OTHER_PROGRAMS):
            continue
        module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                found[node.name].append(module)
    return found


def _names(node: ast.expr | None) -> list[str]:
    """Return the class names an `except` clause (or a handler registration) names."""
    if isinstance(node, ast.Tuple):
        return [name for element in node.elts for name in _names(element)]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    return []


def _caught_by_the_web() -> list[tuple[str, int, str, ast.AST]]:
    """Return (path, line, class name, handler) for what service/web catches or registers."""
    found = []
    for path, tree in SOURCES.items():
        if not path.startswith("service/web/"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ExceptHandler):
                found += [(path, node.lineno, name, node) for name in _names(node.type)]
            elif isinstance(node, ast.Call) and _names(node.func) == ["register_error_handler"]:
                found += [(path, node.lineno, name, node) for name in _names(node.args[0])]
    return found


def _root() -> type:
    import core.errors

    root = getattr(core.errors, "Refusal", None)
    assert isinstance(root, type), "core/errors.py draws no Refusal root"
    return root


def test_every_refusal_derives_from_the_one_root():
    """What a view or the boundary catches by a refusal's name, and every class named
    *Refused or *Problem, is a core.errors.Refusal."""
    import importlib

    root = _root()
    classes = _classes()
    named = {(name, m) for name, modules in classes.items() for m in modules}
    wanted = {(name, m) for name, m in named if re.search("(Refused|Problem)$", name)}
    for _path, _line, name, _node in _caught_by_the_web():
        if REFUSAL_NAME.search(name):
            wanted |= {(name, m) for m in classes.get(name, [])}
    wrong = []
    for name, module in sorted(wanted):
        if name in NOT_REFUSALS:
            continue
        found = getattr(importlib.import_module(module), name)
        if not issubclass(found, root):
            wrong.append(f"{module}.{name}")
    assert wanted, "no refusal found: the rule sees nothing"
    assert wrong == []


def test_only_the_boundary_turns_a_refusal_into_a_response():
    """The boundary registers one handler for every refusal; a view that catches one raises
    again (another refusal), unless it shows it on its own page (SHOWN_IN_PLACE)."""
    classes = _classes()
    registered, wrong = set(), []
    for path, line, name, node in _caught_by_the_web():
        if not (REFUSAL_NAME.search(name) or name == "Refusal") or name not in classes:
            continue
        if path == BOUNDARY:
            registered.add(name)
        elif isinstance(node, ast.ExceptHandler) and (path, name) not in SHOWN_IN_PLACE:
            if not any(isinstance(inner, ast.Raise) for inner in ast.walk(node)):
                wrong.append(f"{path}:{line} answers a {name} itself")
    assert registered == {"Refusal"}, registered
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


def _template_words(source: str) -> list[tuple[int, str]]:
    """Return (line, word) for each status word a template compares with or hands to a call."""
    found = []
    for node in Environment(extensions=["jinja2.ext.i18n"]).parse(source).find_all(nodes.Expr):
        if isinstance(node, nodes.Compare):
            operands = [node.expr, *(op.expr for op in node.ops)]
        elif isinstance(node, nodes.Test):  # `x is sameas "passed"`
            operands = list(node.args)
        elif isinstance(node, nodes.Call):  # `sync_label("sent")`; a sentence to translate aside
            called = node.node
            translating = isinstance(called, nodes.Name) and called.name in TRANSLATING
            operands = [] if translating else list(node.args)
        elif isinstance(node, nodes.Filter) and node.name in ("selectattr", "rejectattr"):
            operands = list(node.args[2:])  # the first argument names an attribute
        else:
            continue
        for operand in operands:
            items = operand.items if isinstance(operand, nodes.Tuple | nodes.List) else [operand]
            found += [
                (node.lineno, item.value)
                for item in items
                if isinstance(item, nodes.Const) and item.value in WORDS
            ]
    return found


def test_no_template_compares_a_value_with_a_status_word():
    """A page asks its view model (`attempt.graded`, `sync.failed`), and a label function
    takes the enum's member (`sync_label(SyncStatus.SENT)`), never a quoted status."""
    wrong = [
        f"{path.relative_to(REPO).as_posix()}:{line} compares with {word!r}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for line, word in _template_words(path.read_text())
    ]
    assert wrong == []


def test_the_template_rule_sees_every_way_to_compare():
    """The rule above, against a template that compares each way, and uses words otherwise."""
    source = (
        '{% if s.status == "graded" %}1{% endif %}\n'
        '{% if s.status in ("queued", "running") %}2{% endif %}\n'
        '{{ sync_label("sent") }}\n'
        '{{ s|selectattr("run_status", "equalto", "passed")|list }}\n'
        '{% if s.run_status is sameas "timeout" %}3{% endif %}\n'
        "<b class=\"{{ 'passed' if ok else 'not-passed' }}\">{{ _(\"failed\") }}</b>\n"
        '{{ cases|selectattr("passed")|list }}\n'
    )
    assert _template_words(source) == [
        (1, "graded"),
        (2, "queued"),
        (2, "running"),
        (3, "sent"),
        (4, "passed"),
        (5, "timeout"),
    ]


def _compared_words(tree: ast.Module) -> list[tuple[int, str]]:
    """Return (line, word) for each status word compared with (==, !=, is, in a literal)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for index, op in enumerate(node.ops):
            left, right = operands[index], operands[index + 1]
            if isinstance(op, ast.In | ast.NotIn):
                items = right.elts if isinstance(right, ast.Tuple | ast.List | ast.Set) else []
            else:
                items = [left, right]
            found += [
                (node.lineno, item.value)
                for item in items
                if isinstance(item, ast.Constant) and item.value in WORDS
            ]
    return found


def test_no_module_compares_a_value_with_a_status_word():
    """`status == RunStatus.FAILED`, never `status == "failed"`: the enum is the one spelling."""
    wrong = [
        f"{path}:{line} compares with {word!r}"
        for path, tree in SOURCES.items()
        if not path.startswith(OTHER_PROGRAMS)
        for line, word in _compared_words(tree)
    ]
    assert wrong == []


def _labelled_enum(node: ast.Dict) -> str | None:
    """Return the enum a dict literal words (keyed by its members, valued by translations)."""
    keys = [key for key in node.keys if key is not None]
    names = {
        key.value.id
        for key in keys
        if isinstance(key, ast.Attribute) and isinstance(key.value, ast.Name)
    }
    translated = all(
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in TRANSLATING
        for value in node.values
    )
    page_enums = {kind.__name__ for kind in PAGE_ENUMS}
    if keys and len(names) == 1 and names <= page_enums and translated:
        return names.pop()
    return None


def _spelled_keys(node: ast.Dict) -> list[tuple[str, list[str]]]:
    """Return (enum, words) for each page enum that a dict literal is keyed by as strings."""
    spelled = {key.value for key in node.keys if isinstance(key, ast.Constant)} & WORDS
    found = []
    for kind in PAGE_ENUMS:
        words = sorted({member.value for member in kind} & spelled)
        if len(words) >= 2:  # one word may be a key of another meaning: {"error": ...}
            found.append((kind.__name__, words))
    return found


def test_the_words_of_each_status_are_one_table_keyed_by_its_enum():
    """No table is keyed by status words as strings; a table that words a page enum's
    members lives in service/web/labels.py, one per enum (test_labels.py holds each to
    every member)."""
    wrong, tables = [], defaultdict(list)
    for path, tree in SOURCES.items():
        if path.startswith(OTHER_PROGRAMS):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Dict):
                continue
            wrong += [f"{path}:{node.lineno} keys {k} by {w}" for k, w in _spelled_keys(node)]
            labelled = _labelled_enum(node)
            if labelled is not None:
                tables[labelled].append(f"{path}:{node.lineno}")
    for name, places in tables.items():
        wrong += [f"{at} words {name} outside {LABELS}" for at in places if LABELS not in at]
        if len(places) > 1:
            wrong.append(f"{name} is worded by {len(places)} tables: {places}")
    assert wrong == []


def test_the_module_rules_see_a_spelled_status():
    """The two rules above, against a module that spells statuses and one that does not."""
    spelled = ast.parse(
        'a = status == "failed"\n'
        'b = "sent" != sync.status\n'
        'c = status in ("queued", "running")\n'
        'd = "error" in outcome\n'  # a key of a dict: another "error"
        "e = status is RunStatus.PASSED\n"
        'WORDS = {"pending": _("pending"), "held": _("held")}\n'
    )
    assert _compared_words(spelled) == [(1, "failed"), (2, "sent"), (3, "queued"), (3, "running")]
    keyed = [node for node in ast.walk(spelled) if isinstance(node, ast.Dict)]
    assert [_spelled_keys(node) for node in keyed] == [[("SyncStatus", ["held", "pending"])]]
    table = ast.parse('T = {SyncStatus.SENT: _("sent"), SyncStatus.HELD: pgettext("s", "held")}')
    not_words = ast.parse("T = {RunStatus.PASSED: (N_('a'), N_('b'))}")  # sentences, in core
    dicts = [node for tree in (table, not_words) for node in ast.walk(tree)]
    assert [_labelled_enum(n) for n in dicts if isinstance(n, ast.Dict)] == ["SyncStatus", None]


def test_a_verdict_is_stored_once():
    """A verdict is its status, time, message and cases (issue 28): its English feedback,
    output, score and difference are derived from them when read, never kept beside them;
    a copy that SQL reads (the score, the first difference) is written in one place."""
    from dataclasses import fields

    from core.verdicts import Verdict
    from service.store.models import Submission

    assert [field.name for field in fields(Verdict)] == [
        "status", "duration_ms", "message", "cases"
    ]  # fmt: skip
    copies = {"stdout", "stderr", "exit_code", "feedback", "feedback_message", "diff_got"}
    assert copies & set(Submission.__table__.columns.keys()) == set()
    copied = ("diff_line", "diff_expected")

    def names(node: ast.AST) -> bool:  # a column named as a string or a keyword: written
        return (isinstance(node, ast.Constant) and node.value in copied) or (
            isinstance(node, ast.keyword) and node.arg in copied
        )

    writers = {
        path
        for path, tree in SOURCES.items()
        if path != "service/store/models.py" and "/migrations/" not in path
        if any(names(node) for node in ast.walk(tree))
    }
    assert writers <= {"service/store/submissions.py"}


# what a student's exception changes of a placement's policy (core.placements.StudentException)
POLICY_FIELDS = ("due_at", "max_attempts", "late_penalty")
OWN_POLICY = ("service/web/teacher/",)  # the teacher's pages show the placement's own policy
STUDENT_TEMPLATES = TEMPLATES / "pages"
_PLACEMENT_FIELD = re.compile(r"placement\.(?:due_at|max_attempts|late_penalty)\b")


def _policy_reads(path: str, tree: ast.AST) -> list[str]:
    """Return where a module reads a student's policy without their exception."""
    wrong = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in POLICY_FIELDS:
            owner = node.value
            name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
            # the columns in SQL: policies.py alone joins the exception to them
            if name == "Placement" and path != "service/store/policies.py":
                wrong.append(f"{path}:{node.lineno} reads Placement.{node.attr}")
            # a placement's own field on a student's page or in the worker
            elif name in ("placement", "found") and path.startswith(
                ("service/web/student/", "workers/")
            ):
                wrong.append(f"{path}:{node.lineno} reads {name}.{node.attr}")
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called != "policy_of":
                continue
            given = [*node.args, *(k.value for k in node.keywords)]
            if len(given) < 2:
                wrong.append(f"{path}:{node.lineno} asks policy_of without the exception")
            elif (
                isinstance(given[1], ast.Constant)
                and given[1].value is None
                and not path.startswith(OWN_POLICY)
            ):
                wrong.append(f"{path}:{node.lineno} asks policy_of for no student's exception")
    return wrong


def test_no_student_policy_is_read_without_their_exception():
    """A placement's due date, attempts and late penalty reach a student only with their
    exception applied (service.store.policies, core.placements.Policy.for_student): only
    policies.py reads those columns in SQL, a student's pages and the worker never read them
    off a placement, policy_of is always given the exception (None only on the teacher's
    pages, for the placement's own policy), and the student's templates read page.policy."""
    wrong = [found for path, tree in SOURCES.items() for found in _policy_reads(path, tree)]
    for template in sorted(STUDENT_TEMPLATES.rglob("*.html")):
        for number, line in enumerate(template.read_text().splitlines(), 1):
            if _PLACEMENT_FIELD.search(line):
                wrong.append(f"{template.relative_to(REPO)}:{number} reads the placement's policy")
    assert wrong == []


@pytest.mark.parametrize(
    "code",
    [
        "policy = grades.policy_of(placement)",
        "policy = policy_of(found, None)",
        "penalty = func.coalesce(Placement.late_penalty, 0.0)",
        "due = placement.due_at",
    ],
)
def test_the_policy_rule_sees_every_way_to_miss_the_exception(code):
    assert _policy_reads("service/web/student/example.py", ast.parse(code)) != []
    assert _PLACEMENT_FIELD.search("{% if page.placement.due_at %}")
