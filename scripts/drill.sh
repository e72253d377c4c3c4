#!/usr/bin/env bash
# Runs the fleet's fault drills (RELIABILITY.md): worker processes SIGKILLed
# at random during a hundred reviews, Redis flushed and restarted without
# persistence mid-run, and the time a killed worker's items wait before
# running again. The drills build the reviewfleet binary, start a
# redis-server of their own on a free port (never the one at
# TEST_REDIS_URL or 6379) and use the Postgres at TEST_DATABASE_URL (one
# database per drill). They need redis-server on PATH and take a few minutes.
#
# Usage: scripts/drill.sh [go test flags, e.g. -run TestKillDrill]
# Environment: TEST_DATABASE_URL, DRILL_REVIEWS (reviews per drill; default
# 100 for the kill drill, 30 for the Redis drills).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v redis-server >/dev/null || { echo "drill: redis-server is not installed (apt-get install redis-server)" >&2; exit 1; }
export TEST_DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}"
DRILL=1 exec go test ./internal/drill -count=1 -v -timeout 30m "$@"
