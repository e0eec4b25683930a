from pathlib import Path

import pytest

from service.settings import Settings


@pytest.mark.parametrize(
    ("environ", "field", "value"),
    [
        ({}, "lease_s", 8),
        ({}, "visibility_timeout_s", 10),
        ({}, "slot_uid_shift", 1_000_000),
        ({"CODEBLANKS_SLOT_UID_SHIFT": "2000000"}, "slot_uid_shift", 2_000_000),
        ({"CODEBLANKS_LEASE_S": "5"}, "lease_s", 5),
        ({"CODEBLANKS_SWEEP_INTERVAL_S": "1"}, "sweep_interval_s", 1),
        ({"CODEBLANKS_INSTANCE_DIR": "/tmp/i"}, "instance_dir", Path("/tmp/i")),
        ({"CODEBLANKS_REDIS_URL": "redis://h:1/2"}, "broker", "redis://h:1/2"),
        ({}, "broker", "redis://127.0.0.1:6379/0"),
        ({"CODEBLANKS_INSTANCE_DIR": "/tmp/i"}, "database", "sqlite:////tmp/i/codeblanks.db"),
        (
            {"CODEBLANKS_DATABASE_URL": "postgresql+psycopg://x/y"},
            "database",
            "postgresql+psycopg://x/y",
        ),
    ],
)
def test_settings_from_the_environment(environ, field, value):
    assert getattr(Settings.from_env(environ), field) == value


def test_a_number_that_is_not_says_which_variable():
    with pytest.raises(ValueError, match="CODEBLANKS_LEASE_S: 'ten' is not a number"):
        Settings.from_env({"CODEBLANKS_LEASE_S": "ten"})
