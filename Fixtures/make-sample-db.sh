#!/usr/bin/env bash
# Rebuilds Fixtures/sample.sqlite from schema.sql and seed.sql (needs the sqlite3 CLI:
# apt-get install sqlite3). The result is committed; tests check it matches these files.
set -euo pipefail
cd "$(dirname "$0")"
rm -f sample.sqlite
sqlite3 sample.sqlite <<SQL
PRAGMA journal_mode = DELETE;
PRAGMA foreign_keys = ON;
.read schema.sql
.read seed.sql
PRAGMA foreign_key_check;
VACUUM;
SQL
echo "wrote $(pwd)/sample.sqlite"
