import stat
import subprocess
import sys

import pytest

from tests.conftest import REPO

ADD = [
    "platforms",
    "add",
    "--issuer",
    "https://moodle.example.org",
    "--client-id",
    "abc",
    "--deployment-id",
    "1",
    "--deployment-id",
    "2",
    "--auth-login-url",
    "https://moodle.example.org/mod/lti/auth.php",
    "--auth-token-url",
    "https://moodle.example.org/mod/lti/token.php",
    "--key-set-url",
    "https://moodle.example.org/mod/lti/certs.php",
    "--name",
    "Moodle",
]


@pytest.fixture
def codeblanks(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "CODEBLANKS_INSTANCE_DIR": str(tmp_path / "instance")}

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "service", *args],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=env,
        )

    run.instance = tmp_path / "instance"
    return run


def test_add_list_remove(codeblanks):
    added = codeblanks(*ADD)
    assert added.returncode == 0, added.stderr
    assert "deployments 1, 2" in added.stdout
    listed = codeblanks("platforms", "list")
    assert "https://moodle.example.org\tclient abc\tdeployments 1,2" in listed.stdout
    assert codeblanks("platforms", "remove", "1").returncode == 0
    assert "no platforms registered" in codeblanks("platforms", "list").stdout
    assert codeblanks("platforms", "remove", "1").returncode == 2
    assert stat.S_IMODE(codeblanks.instance.stat().st_mode) == 0o700


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--issuer", "http://moodle.example.org", "https"),
        ("--key-set-url", "ftp://x/y", "https"),
        ("--client-id", "c" * 300, "1 to 255 characters"),
    ],
)
def test_bad_registrations_exit_2(codeblanks, flag, value, message):
    args = list(ADD)
    args[args.index(flag) + 1] = value
    done = codeblanks(*args)
    assert done.returncode == 2 and message in done.stderr


def test_keys_rotate_keeps_the_old_key_published(codeblanks):
    first = codeblanks("keys", "list").stdout.split()
    rotated = codeblanks("keys", "rotate")
    assert rotated.returncode == 0
    assert codeblanks("keys", "list").stdout.split()[1:] == first


def test_add_again_with_other_urls_needs_replace(codeblanks):
    assert codeblanks(*ADD).returncode == 0
    other = [*ADD[:-4], "--key-set-url", "https://elsewhere.example/jwks", "--name", "Moodle"]
    refused = codeblanks(*other)
    assert refused.returncode == 2 and "--replace" in refused.stderr
    replaced = codeblanks(*other, "--replace")
    assert replaced.returncode == 0, replaced.stderr


def test_a_token_audience_is_kept_and_listed_and_changed_only_with_replace(codeblanks):
    assert codeblanks(*ADD).returncode == 0
    assert "token audience" not in codeblanks("platforms", "list").stdout  # none: the token URL
    audience = ["--token-audience", "https://api.brightspace.com/auth/token"]
    refused = codeblanks(*ADD, *audience)
    assert refused.returncode == 2 and "--replace" in refused.stderr
    assert codeblanks(*ADD, *audience, "--replace").returncode == 0
    listed = codeblanks("platforms", "list").stdout
    assert "deployments 1,2\ttoken audience https://api.brightspace.com/auth/token" in listed
    bad = codeblanks(*ADD, "--token-audience", "ftp://x/y", "--replace")
    assert bad.returncode == 2 and "token audience must be an https URL" in bad.stderr


def test_register_url_prints_one_single_use_url(codeblanks):
    made = codeblanks("platforms", "register-url", "--name", "Our Moodle", "--valid-hours", "3")
    assert made.returncode == 0, made.stderr
    [url] = made.stdout.split()
    assert url.startswith("http://127.0.0.1:5000/lti/register?token=")
    assert codeblanks("platforms", "register-url", "--valid-hours", "721").returncode == 2
    assert codeblanks("platforms", "register-url", "--replace", "99").returncode == 2
