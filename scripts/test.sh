#!/usr/bin/env bash
# Run the whole test suite: set up (idempotent), lint and type-check, then pytest.
# Tests start the services they need themselves and stop them afterwards.
#   scripts/test.sh [PYTEST ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --no-run

echo "test: ruff"
.venv/bin/ruff check .
echo "test: mypy (strict on core, service, workers, demo and testkit)"
.venv/bin/mypy
echo "test: pytest"
set +e
.venv/bin/pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "test: pytest collected no tests; that is a failure" >&2
  exit 1
fi
exit "$status"
