#!/usr/bin/env bash
# Installs hivepark into .venv (exact pins), Java 17 when `java` is missing, then runs
# examples/quickstart.sql on an embedded warehouse (SQLite metastore + ./warehouse + local Spark).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v java >/dev/null 2>&1; then
  echo "== installing Java 17 (apt)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi

JDBC_PKGS=""
[ -e /usr/share/java/postgresql.jar ] || JDBC_PKGS="$JDBC_PKGS libpostgresql-jdbc-java"
[ -e /usr/share/java/mariadb-java-client.jar ] || JDBC_PKGS="$JDBC_PKGS libmariadb-java"
[ -e /usr/share/java/sqlite-jdbc.jar ] || JDBC_PKGS="$JDBC_PKGS libxerial-sqlite-jdbc-java"
if [ -n "$JDBC_PKGS" ]; then
  echo "== installing the JDBC drivers of the JDBC storage handler (apt):$JDBC_PKGS"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $JDBC_PKGS >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  "$PY" -m venv .venv
fi
echo "== installing hivepark and its pinned dependencies into .venv"
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e ".[test]"

echo "== running examples/quickstart.sql"
rm -rf .quickstart
mkdir -p .quickstart
cp examples/pageviews.csv .quickstart/ 2>/dev/null || true
cd .quickstart
../.venv/bin/hivepark --warehouse ./warehouse -f ../examples/quickstart.sql
