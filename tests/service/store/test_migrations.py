import threading

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from service.store import Store
from service.store.migrate import config, is_current, upgrade
from service.store.models import Base

TABLES = {
    "platforms",
    "deployments",
    "users",
    "courses",
    "placements",
    "submissions",
    "question_answers",
    "grades",
    "grade_syncs",
    "memberships",
    "lti_logins",
    "lti_nonces",
    "drafts",
    "regrades",
    "regrade_scores",
    "registration_tokens",
    "login_failures",
    "platform_outages",
    "policy_exceptions",
    "score_overrides",
    "line_item_reads",
    "practice_runs",
    "figures",
    "platform_checks",
    "alembic_version",
}


def test_upgrade_creates_every_table(store):
    assert set(inspect(store.engine).get_table_names()) == TABLES
    assert is_current(store)


def test_models_and_migrations_agree(store):
    with store.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []


def test_upgrade_twice_is_a_no_op(store):
    upgrade(store)
    assert is_current(store)


def test_downgrade_to_base_and_back(store):
    cfg = config()
    with store.engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.downgrade(cfg, "base")
    assert set(inspect(store.engine).get_table_names()) == {"alembic_version"}
    upgrade(store)
    assert is_current(store)


def test_processes_starting_together_migrate_once(database_url):
    stores = [Store(database_url) for _ in range(4)]
    errors = []

    def migrate(store):
        try:
            upgrade(store)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=migrate, args=(s,)) for s in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert all(is_current(s) for s in stores)
    for s in stores:
        s.dispose()


def test_a_roster_read_before_0005_counts_as_read(store):
    cfg = config()
    with store.engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.downgrade(cfg, "0004")
    read_at = "2026-11-30 08:00:00"
    with store.engine.begin() as connection:
        for statement in (
            "INSERT INTO platforms (id, issuer, client_id, name, auth_login_url, auth_token_url,"
            " key_set_url, auto_add_deployments, created_at) VALUES (1, 'https://lms.example',"
            " 'tool', 'LMS', 'a', 't', 'k', false, '2026-11-01 00:00:00')",
            "INSERT INTO courses (id, platform_id, context_id, title) VALUES (1, 1, 'c1', ''),"
            " (2, 1, 'c2', '')",
            "INSERT INTO users (id, platform_id, sub, name, email) VALUES (1, 1, 's', '', '')",
            "INSERT INTO memberships (course_id, user_id, roles, teacher, active, roster_at)"
            f" VALUES (1, 1, '', false, true, '{read_at}')",
        ):
            connection.execute(text(statement))
    upgrade(store)
    with store.engine.connect() as connection:
        rows = connection.execute(text("SELECT id, roster_read_at FROM courses ORDER BY id"))
        assert [(i, str(at) if at else None) for i, at in rows] == [(1, read_at), (2, None)]


def test_0020_keeps_every_platform_as_it_was_and_its_downgrade_loses_none(store):
    cfg = config()
    with store.engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.downgrade(cfg, "0019")
    with store.engine.begin() as connection:
        for statement in (
            "INSERT INTO platforms (id, issuer, client_id, name, auth_login_url, auth_token_url,"
            " key_set_url, auto_add_deployments, created_at) VALUES (1, 'https://lms.example',"
            " 'tool', 'LMS', 'a', 't', 'k', false, '2026-11-01 00:00:00')",
            "INSERT INTO deployments (id, platform_id, deployment_id) VALUES (1, 1, 'd1')",
        ):
            connection.execute(text(statement))
    upgrade(store)
    with store.engine.begin() as connection:
        assert connection.execute(text("SELECT token_audience FROM platforms")).all() == [(None,)]
        connection.execute(text("UPDATE platforms SET token_audience = 'https://aud.example'"))
    with store.engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.downgrade(cfg, "0019")
    with store.engine.connect() as connection:  # in place: no cascade took the deployment
        assert connection.execute(text("SELECT deployment_id FROM deployments")).all() == [("d1",)]
        columns = {c["name"] for c in inspect(connection).get_columns("platforms")}
    assert "token_audience" not in columns
    upgrade(store)
