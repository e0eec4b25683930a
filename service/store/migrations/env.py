"""Alembic's environment: runs on the connection that service.store.migrate hands it."""

from alembic import context

from service.store.models import Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
