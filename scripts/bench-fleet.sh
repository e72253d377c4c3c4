#!/usr/bin/env bash
# Measures a batch at fleet scale with the built binary (BENCHMARKS.md,
# "A batch fills the fleet"): WORKERS separate `reviewfleet worker`
# processes with the default settings and one scheduler, a redis-server of
# the script's own on a free port, a database of its own on the Postgres at
# PGURL, and fakellm answering every call after LATENCY (optionally
# enforcing RPM requests per minute). One batch of REVIEWS reviews, each of
# its own small change (a head commit of one repository served over http
# on the loopback interface), is submitted and waited for; then the
# figures are read back from Postgres and fakellm.
#
# Usage: scripts/bench-fleet.sh
# Environment: WORKERS (default 2), REVIEWS (default 100), LATENCY (200ms),
# RPM (0: no provider quota), PGURL (postgres://postgres@127.0.0.1:5432),
# OUT (a scratch directory; default a new one under /tmp).
set -euo pipefail
cd "$(dirname "$0")/.."
WORKERS="${WORKERS:-2}"
REVIEWS="${REVIEWS:-100}"
LATENCY="${LATENCY:-200ms}"
RPM="${RPM:-0}"
PGURL="${PGURL:-postgres://postgres@127.0.0.1:5432}"
OUT="${OUT:-$(mktemp -d /tmp/bench-fleet.XXXXXX)}"
mkdir -p "$OUT"
. scripts/benchlib.sh

go build -o "$OUT/rf" ./cmd/reviewfleet
go build -o "$OUT/fakellm" ./cmd/fakellm
go build -o "$OUT/fakegithub" ./cmd/fakegithub

# One repository: a base commit and REVIEWS head commits, each changing
# three files on top of the base, so no two entries are the same review.
repo="$OUT/repo"
rm -rf "$repo" && git init -q -b main "$repo"
(
	cd "$repo"
	git config user.email bench@example.invalid && git config user.name bench
	for f in a b c; do
		printf 'package demo\n\n// %s holds the base.\nfunc %s(n int) int {\n\treturn n\n}\n' "$f" "$(echo $f | tr a-z A-Z)" >"$f.go"
	done
	git add . && git commit -q -m base
	base=$(git rev-parse HEAD)
	echo "$base" >"$OUT/base"
	: >"$OUT/heads"
	for i in $(seq 1 "$REVIEWS"); do
		git checkout -q --detach "$base"
		for f in a b c; do
			printf 'package demo\n\n// %s holds change %d.\nfunc %s(n int) int {\n\tv := n * %d // MARKER: unchecked overflow\n\treturn v\n}\n' \
				"$f" "$i" "$(echo $f | tr a-z A-Z)" "$i" >"$f.go"
		done
		git commit -q -am "change $i"
		git branch -q "change-$i"
		git rev-parse HEAD >>"$OUT/heads"
	done
	git checkout -q main
)

"$OUT/fakegithub" -repo "$repo" -base "$(cat "$OUT/base")" -head "$(head -1 "$OUT/heads")" -pr acme/api#1 -serve-git \
	>"$OUT/fakegithub.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q 'cloned from' "$OUT/fakegithub.log" && break; sleep 0.1; done
clone=$(sed -n 's/.*cloned from \([^)]*\)).*/\1/p' "$OUT/fakegithub.log")
llmport=$(free_port)
"$OUT/fakellm" -addr "127.0.0.1:$llmport" -reviewer markers -marker MARKER -latency "$LATENCY" -rpm "$RPM" \
	-report-every 10s >"$OUT/fakellm.log" 2>&1 &
llmpid=$!
pids+=($llmpid)
bench_redis
bench_db "rf_bench_$$"
export OPENAI_BASE_URL="http://127.0.0.1:$llmport/v1" OPENAI_API_KEY=bench
printf 'snapshot:\n  allow_loopback_http: true\nexpert:\n  snapshot_dir: %s\n' "$OUT/cache" >"$OUT/config.yaml"
sleep 1
"$OUT/rf" migrate --config "$OUT/config.yaml" >/dev/null

while read -r head; do
	printf '{"repo": "%s", "base": "%s", "head": "%s"}\n' "$clone" "$(cat "$OUT/base")" "$head"
done <"$OUT/heads" >"$OUT/manifest.jsonl"

# The whole batch is stored before the fleet starts, so what is measured
# is the fleet, not the submission.
"$OUT/rf" bulk --config "$OUT/config.yaml" --manifest "$OUT/manifest.jsonl" --no-wait >"$OUT/bulk.out" 2>"$OUT/bulk.err"
uptime >"$OUT/load-before"
start=$(date +%s.%N)
psql -qAt "$DATABASE_URL" -c "SELECT 'fleet_start ' || now()" >"$OUT/start"
bench_fleet
# Every half second: reviews running and queued, pending items of running
# reviews (what admission counts against the slots). One session asks: a
# psql process and a new server session every time took 4% of a two-core
# machine from the fleet being measured.
coproc SAMPLER { psql -qAt "$DATABASE_URL" 2>&1; }
pids+=($SAMPLER_PID)
while :; do
	echo "SELECT count(*) FILTER (WHERE status = 'running'), count(*) FILTER (WHERE status = 'queued'),
		(SELECT count(*) FROM stage_items si JOIN reviews r ON r.id = si.review_id WHERE si.status = 'pending' AND r.status = 'running')
		FROM reviews;" >&"${SAMPLER[1]}"
	read -t 30 -r row <&"${SAMPLER[0]}" || { echo "bench-fleet: the sampling session stopped" >&2; exit 1; }
	echo "$(date +%s.%N) $row" >>"$OUT/samples"
	case "$row" in 0\|0\|*) break ;; esac
	sleep 0.5
done
sampler_in=${SAMPLER[1]}
exec {sampler_in}>&-
wait "$SAMPLER_PID" 2>/dev/null || true
end=$(date +%s.%N)
uptime >"$OUT/load-after"
kill -INT "$llmpid" && wait "$llmpid" 2>/dev/null || true

psql -qAt "$DATABASE_URL" >"$OUT/figures" <<'SQL'
SELECT 'reviews ' || count(*) || ' done ' || count(*) FILTER (WHERE status = 'done')
       || ' failed ' || count(*) FILTER (WHERE status = 'failed') FROM reviews;
SELECT 'wall_s ' || round(extract(epoch FROM max(finished_at) - (SELECT min(created_at) FROM llm_calls))::numeric, 1) FROM reviews;
SELECT 'calls ' || count(*) || ' ok ' || count(*) FILTER (WHERE status = 'ok')
       || ' rate_limited ' || count(*) FILTER (WHERE status = 'rate_limited')
       || ' mean_latency_ms ' || round(avg(latency_ms) FILTER (WHERE status = 'ok'), 1) FROM llm_calls;
SELECT 'items ' || count(*) || ' item_s ' || round(sum(extract(epoch FROM finished_at - started_at))::numeric, 1)
       || ' queue_wait_ms ' || round((avg(extract(epoch FROM started_at - queued_at)) * 1000)::numeric)
       FROM stage_items WHERE finished_at IS NOT NULL AND started_at IS NOT NULL;
SELECT 'call_s ' || round(sum(latency_ms) / 1000.0, 1) FROM llm_calls;
SELECT 'review_s mean ' || round(avg(extract(epoch FROM finished_at - started_at))::numeric, 1)
       || ' max ' || round(max(extract(epoch FROM finished_at - started_at))::numeric, 1)
       || ' (admitted to ended)' FROM reviews WHERE finished_at IS NOT NULL;
SELECT 'call_span_s ' || round(extract(epoch FROM max(created_at) - min(created_at))::numeric, 1) FROM llm_calls;
SQL
slots=$((WORKERS * 8))
{
	echo "workers $WORKERS slots $slots reviews $REVIEWS latency $LATENCY rpm $RPM"
	echo "fleet wall $(echo "$end - $start" | bc) s (workers started to last review ended, sampled)"
	awk '{ split($2, f, "|"); r += f[1]; p += f[3]; n++ } END { printf "mean running reviews %.1f, pending items %.1f\n", r / n, p / n }' "$OUT/samples"
	cat "$OUT/figures"
	echo "load before: $(cat "$OUT/load-before")"
	echo "load after:  $(cat "$OUT/load-after")"
	grep -E 'calls at once|quota' "$OUT/fakellm.log" || true
} | tee "$OUT/summary"
awk -v slots="$slots" -v lat="$LATENCY" -v rpm="$RPM" '
	/^reviews / { n = $2 }
	/^wall_s / { wall = $2 }
	/^calls / { calls = $2; ok = $4; rl = $6; ms = $8 }
	/^items / { items_s = $4 }
	/^call_s / { call_s = $2 }
	/^call_span_s / { span = $2 }
	END {
		secs = lat + 0; if (lat ~ /ms$/) secs /= 1000; else if (lat ~ /m$/) secs *= 60
		cpr = ok / n
		limit = slots / (cpr * secs) * 60
		printf "reviews/min %.0f; calls/review %.1f; slot-bound limit %.0f/min (%.0f%%)\n", n / wall * 60, cpr, limit, 100 * (n / wall * 60) / limit
		printf "slot time held by items %.0f%%, by model calls %.0f%%\n", 100 * items_s / (wall * slots), 100 * call_s / (wall * slots)
		if (rpm > 0) printf "quota used %.1f%% (%d calls answered in %.1f s, quota %d a minute); 429s %.2f%% of calls\n", 100 * ok / (span / 60 * rpm), ok, span, rpm, 100 * rl / calls
	}' "$OUT/figures" | tee -a "$OUT/summary"
cleanup
echo "bench-fleet: logs in $OUT"
