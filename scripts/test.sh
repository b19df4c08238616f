#!/usr/bin/env bash
# Runs the whole test suite: the pure core, Spark tests on one shared session, and the
# catalog suite on SQLite and on a real PostgreSQL server the tests start on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  echo "== installing PostgreSQL (apt) for the catalog tests"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
fi
if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
  echo "== installing MariaDB (apt) for the JDBC handler tests"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq mariadb-server >/dev/null
fi
if ! command -v java >/dev/null 2>&1; then
  echo "java is missing: run scripts/setup.sh first" >&2; exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo ".venv is missing: run scripts/setup.sh first" >&2; exit 1
fi
export HIVEPARK_REQUIRE_POSTGRES=${HIVEPARK_REQUIRE_POSTGRES:-1}
exec .venv/bin/python -m pytest -q "$@"
