import subprocess
import sys

FORBIDDEN = ["flask", "celery", "redis", "sqlalchemy", "docker", "pylti1p3", "werkzeug"]


def test_domain_imports_no_framework():
    code = (
        "import sys, core.lessons, core.compare, core.questions, core.lesson_scores, core.runs, "
        "core.verdicts, core.errors, core.placements, core.platforms, core.syncs\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_sandbox_imports_nothing_of_ours_but_the_domain():
    code = (
        "import sys, workers.sandbox.bwrap, workers.sandbox.fake\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('service',) "
        f"or m.split('.')[0] in {FORBIDDEN!r}]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
