import stat
import subprocess
import threading

from service.instance import secret_key
from tests.conftest import REPO


def test_secret_key_is_made_once_private_and_kept(tmp_path):
    instance = tmp_path / "instance"
    key = secret_key(instance)
    assert len(key) >= 32
    assert stat.S_IMODE((instance / "secret_key").stat().st_mode) == 0o600
    assert secret_key(instance) == key
    assert secret_key(tmp_path / "another") != key


def test_processes_starting_together_share_one_key(tmp_path):
    keys = []
    threads = [
        threading.Thread(target=lambda: keys.append(secret_key(tmp_path / "i"))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(keys)) == 1
    assert [p.name for p in (tmp_path / "i").iterdir()] == ["secret_key"]


def test_the_app_signs_sessions_with_the_instance_key(app, settings):
    assert app.secret_key == (settings.instance_dir / "secret_key").read_bytes().strip()


def test_the_instance_dir_stays_out_of_git():
    done = subprocess.run(
        ["git", "check-ignore", "instance/secret_key"], cwd=REPO, capture_output=True
    )
    assert done.returncode == 0
