#!/usr/bin/env bash
# Times deleting one review that holds N findings (each with a verdict,
# every tenth merged into its neighbour, one in a hundred with an expert
# run) next to another review with a tenth as many findings, with
# the foreign-key indexes of migration 00012 ("after") or without them
# ("before"), or with `reviewfleet prune` and its bounded batches instead of
# one DELETE ("prune"). It works in a schema of its own, bench_delete_review, of the
# database given, and drops it at the end.
#
# Usage: scripts/bench-delete-review.sh DATABASE_URL N before|after|prune [TIMEOUT]
# TIMEOUT bounds the delete (a Postgres interval, default '10min').
set -euo pipefail
cd "$(dirname "$0")/.."
url=${1:?database URL}; n=${2:?number of findings}; mode=${3:?before or after}; timeout=${4:-10min}
schema=bench_delete_review
export PGOPTIONS="-c search_path=$schema"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"; psql "$url" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true' EXIT
psql "$url" -qc "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema" 2>/dev/null
GOFLAGS=-buildvcs=false go build -o "$tmp/reviewfleet" ./cmd/reviewfleet
sep='?'; [[ $url == *\?* ]] && sep='&'
DATABASE_URL="$url${sep}search_path=$schema" "$tmp/reviewfleet" migrate >/dev/null 2>&1
if [[ $mode == before ]]; then
  psql "$url" -qc "DROP INDEX findings_merged_into_idx, expert_runs_review_idx"
fi
psql "$url" -q -v ON_ERROR_STOP=1 <<SQL
INSERT INTO reviews (id, repo, source, status, deadline_at) VALUES
  ('00000000-0000-0000-0000-000000000001', 'bench', 'git', 'done', now()),
  ('00000000-0000-0000-0000-000000000002', 'other', 'git', 'done', now());
INSERT INTO findings (review_id, origin, ordinal, risk_type, file, line_start, line_end, description,
                      severity, confidence_initial, confidence)
SELECT ('00000000-0000-0000-0000-00000000000' || r)::uuid, 'p' || (g / 1000), g % 1000, 'rt', 'f.go', g, g,
       'a finding', 'low', 0.5, 0.5
FROM generate_series(1, 2) r, generate_series(1, CASE r WHEN 1 THEN $n ELSE $n / 10 END) g;
UPDATE findings SET merged_into = id - 1, status = 'merged' WHERE id % 10 = 0;
INSERT INTO verdicts (review_id, finding_id, stage, verdict, confidence_before, confidence_after)
SELECT review_id, id, 'verify', 'anchored', 0.5, 0.5 FROM findings WHERE review_id = '00000000-0000-0000-0000-000000000001';
INSERT INTO expert_runs (review_id, finding_id, stop_reason)
SELECT review_id, id, 'verdict' FROM findings WHERE id % 100 = 1;
VACUUM ANALYZE;
SQL
echo "mode=$mode findings=$n"
if [[ $mode == prune ]]; then
  psql "$url" -qc "UPDATE reviews SET created_at = now() - interval '2 days' WHERE repo = 'bench'"
  DATABASE_URL="$url${sep}search_path=$schema" "$tmp/reviewfleet" prune --older-than 1d ${PRUNE_FLAGS:-}
  exit
fi
psql "$url" -v ON_ERROR_STOP=1 <<SQL
SET statement_timeout = '$timeout';
\timing on
DELETE FROM reviews WHERE id = '00000000-0000-0000-0000-000000000001';
SQL
