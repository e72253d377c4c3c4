#!/usr/bin/env bash
# Measures one large review against its critical path with the built
# binary (BENCHMARKS.md, "Wall time against the critical path"): WORKERS
# separate `reviewfleet worker` processes with the default settings and one
# scheduler, a redis-server of the script's own, a database of its own on
# the Postgres at PGURL, and fakellm's markers reviewer answering after
# LATENCY. The repository holds FILES files of LINES lines; the change
# edits the first CHANGED of them (all by default), with one marked line
# in each of the first MARKED; RUNS such changes, alike but for one value
# per edited line, are each submitted alone and waited for: the
# first meets workers just started, the others workers that have run a
# review but never seen the change's content.
#
# The critical path is read back from llm_calls: for every finding, the
# summed call time of its intent item, verify, expert rounds and eval (and
# every intent item alone), the longest of them. The staged ideal adds up
# each stage's longest item, since a stage starts when the previous one
# has ended.
#
# Usage: scripts/bench-large-review.sh
# Environment: FILES (140), CHANGED (FILES), LINES (900), MARKED (8), WORKERS (2), LATENCY (200ms),
# RUNS (3), PGURL (postgres://postgres@127.0.0.1:5432), OUT (a scratch
# directory; default a new one under /tmp).
set -euo pipefail
cd "$(dirname "$0")/.."
FILES="${FILES:-140}"
CHANGED="${CHANGED:-$FILES}"
LINES="${LINES:-900}"
MARKED="${MARKED:-8}"
WORKERS="${WORKERS:-2}"
LATENCY="${LATENCY:-200ms}"
RUNS="${RUNS:-3}"
PGURL="${PGURL:-postgres://postgres@127.0.0.1:5432}"
OUT="${OUT:-$(mktemp -d /tmp/bench-large.XXXXXX)}"
mkdir -p "$OUT"
. scripts/benchlib.sh

go build -o "$OUT/rf" ./cmd/reviewfleet
go build -o "$OUT/fakellm" ./cmd/fakellm

# One repository: a base of FILES Go files and RUNS heads that change every
# hundredth line of each and mark one line in each of the first MARKED.
repo="$OUT/repo"
rm -rf "$repo" && git init -q -b main "$repo"
(
	cd "$repo"
	git config user.email bench@example.invalid && git config user.name bench
	for f in $(seq 1 "$FILES"); do
		awk -v f="$f" -v n="$LINES" 'BEGIN { print "package demo"; for (i = 2; i <= n; i++) printf "var v%d_%d = %d // base value\n", f, i, i }' >"f$f.go"
	done
	git add . && git commit -q -m base
	git rev-parse HEAD >"$OUT/base"
	: >"$OUT/heads"
	for run in $(seq 1 "$RUNS"); do
		git checkout -q --detach "$(cat "$OUT/base")"
		for f in $(seq 1 "$CHANGED"); do
			awk -v f="$f" -v n="$LINES" -v marked="$MARKED" -v run="$run" 'BEGIN { print "package demo"; for (i = 2; i <= n; i++) {
				if (i == 450 && f <= marked) printf "var v%d_%d = %d * 3 // MARKER: unchecked overflow\n", f, i, i
				else if (i % 100 == 0) printf "var v%d_%d = %d + %d // head value\n", f, i, i, run
				else printf "var v%d_%d = %d // base value\n", f, i, i } }' >"f$f.go"
		done
		git commit -q -am "head $run"
		git rev-parse HEAD >>"$OUT/heads"
	done
)

llmport=$(free_port)
"$OUT/fakellm" -addr "127.0.0.1:$llmport" -reviewer markers -marker MARKER -latency "$LATENCY" >"$OUT/fakellm.log" 2>&1 &
pids+=($!)
bench_redis
bench_db "rf_large_$$"
export OPENAI_BASE_URL="http://127.0.0.1:$llmport/v1" OPENAI_API_KEY=bench
printf 'expert:\n  snapshot_dir: %s\n' "$OUT/cache" >"$OUT/config.yaml"
sleep 1
"$OUT/rf" migrate --config "$OUT/config.yaml" >/dev/null
bench_fleet
sleep 2

: >"$OUT/summary"
for run in $(seq 1 "$RUNS"); do
	cpu0=$(worker_cpu)
	s=$(date +%s.%N)
	"$OUT/rf" review --config "$OUT/config.yaml" --repo "$repo" --base "$(cat "$OUT/base")" --head "$(sed -n "${run}p" "$OUT/heads")" \
		--format json --quiet >"$OUT/review$run.json" 2>"$OUT/review$run.err" || true
	e=$(date +%s.%N)
	cpu_s=$(echo "$(worker_cpu) - $cpu0" | bc)
	psql -qAt "$DATABASE_URL" -v cmd_s="$(echo "$e - $s" | bc)" -v cpu_s="$cpu_s" >>"$OUT/summary" <<'SQL'
WITH r AS (SELECT * FROM reviews ORDER BY created_at DESC LIMIT 1),
item AS (SELECT stage, item_key, sum(latency_ms) AS ms, count(*) AS calls, sum(tokens_in + tokens_out) AS tokens
         FROM llm_calls WHERE review_id = (SELECT id FROM r) GROUP BY 1, 2),
f AS (SELECT id, origin FROM findings WHERE review_id = (SELECT id FROM r)),
path AS (
	SELECT greatest((SELECT max(ms) FROM item WHERE stage = 'intent'),
	       (SELECT max(coalesce(i.ms, 0) + coalesce(v.ms, 0) + coalesce(x.ms, 0) + coalesce(e.ms, 0)) FROM f
	        LEFT JOIN item i ON i.stage = 'intent' AND i.item_key = f.origin
	        LEFT JOIN item v ON v.stage = 'verify' AND v.item_key = 'f' || f.id
	        LEFT JOIN item x ON x.stage = 'expert' AND x.item_key = 'f' || f.id
	        LEFT JOIN item e ON e.stage = 'eval' AND e.item_key = 'f' || f.id)) / 1000.0 AS s),
staged AS (SELECT sum(m) / 1000.0 AS s FROM (SELECT max(ms) AS m FROM item GROUP BY stage) x),
wall AS (SELECT extract(epoch FROM finished_at - started_at) AS s, status FROM r)
SELECT format('status %s calls %s tokens %s wall %s s (command %s s) critical path %s s ratio %s staged ideal %s s workers cpu %s s',
	(SELECT status FROM wall), (SELECT sum(calls) FROM item), (SELECT sum(tokens) FROM item),
	round((SELECT s FROM wall)::numeric, 2), round(:'cmd_s'::numeric, 2), round((SELECT s FROM path)::numeric, 2),
	round(((SELECT s FROM wall) / (SELECT s FROM path))::numeric, 2), round((SELECT s FROM staged)::numeric, 2), :'cpu_s');
SQL
	tail -1 "$OUT/summary"
done
psql -qAt "$DATABASE_URL" >>"$OUT/summary" <<'SQL'
SELECT format('%s items: claim to first call %s ms, call window %s ms over %s ms of calls (means)', i.stage,
	round(avg(extract(epoch FROM c.first - i.started_at) * 1000)::numeric, 1),
	round(avg(extract(epoch FROM c.last - c.first) * 1000)::numeric, 1), round(avg(c.ms)::numeric, 1))
FROM stage_items i JOIN (SELECT review_id, stage, item_key, min(started_at) AS first, max(finished_at) AS last, sum(latency_ms) AS ms
                         FROM llm_calls GROUP BY 1, 2, 3) c USING (review_id, stage, item_key)
GROUP BY i.stage ORDER BY i.stage;
SELECT format('last review, %s stage: from %s to %s ms after its start (%s items)', i.stage,
	round(extract(epoch FROM min(i.started_at) - r.started_at) * 1000), round(extract(epoch FROM max(i.finished_at) - r.started_at) * 1000), count(*))
FROM stage_items i JOIN (SELECT id, started_at FROM reviews ORDER BY created_at DESC LIMIT 1) r ON r.id = i.review_id
GROUP BY i.stage, r.started_at ORDER BY min(i.started_at);
SELECT format('last review: ends %s ms after its start', round(extract(epoch FROM finished_at - started_at) * 1000))
FROM reviews ORDER BY created_at DESC LIMIT 1;
SQL
tail -12 "$OUT/summary"
cleanup
echo "bench-large-review: logs in $OUT"
