# Shared by the fleet benchmarks (scripts/bench-fleet.sh,
# scripts/bench-large-review.sh), which source it after setting OUT,
# WORKERS and PGURL: free ports, a redis-server and a database of the
# script's own, the fleet's processes, and cleanup of what was started.

command -v redis-server >/dev/null || { echo "$(basename "$0"): redis-server is not installed" >&2; exit 1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# pids are the processes the script started; cleanup kills them (at exit
# too) and drops the database bench_db created.
pids=()
bench_dbname=""
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	pids=()
	if [ -n "$bench_dbname" ]; then
		psql -q "$PGURL/postgres" -c "DROP DATABASE $bench_dbname" >/dev/null 2>&1 || true
		bench_dbname=""
	fi
}
trap cleanup EXIT

# bench_redis starts a redis-server that keeps nothing on disk and exports
# REDIS_URL.
bench_redis() {
	local port
	port=$(free_port)
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >"$OUT/redis.log" 2>&1 &
	pids+=($!)
	export REDIS_URL="redis://127.0.0.1:$port/0"
}

# bench_db creates the database NAME and exports DATABASE_URL.
bench_db() {
	bench_dbname="$1"
	createdb -d "$PGURL/postgres" "$1" 2>/dev/null || psql "$PGURL/postgres" -qc "CREATE DATABASE $1"
	export DATABASE_URL="$PGURL/$1?sslmode=disable"
}

# worker_cpu prints the CPU seconds the fleet's worker processes used so
# far (user and system, from /proc).
worker_pids=()
worker_cpu() {
	local p ticks=0
	for p in "${worker_pids[@]}"; do
		ticks=$((ticks + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo "scale=2; $ticks / $(getconf CLK_TCK)" | bc
}

# bench_fleet starts WORKERS `reviewfleet worker` processes and a
# scheduler with the configuration $OUT/config.yaml.
bench_fleet() {
	local i
	for i in $(seq 1 "$WORKERS"); do
		"$OUT/rf" worker --config "$OUT/config.yaml" >"$OUT/worker$i.log" 2>&1 &
		pids+=($!)
		worker_pids+=($!)
	done
	"$OUT/rf" scheduler --config "$OUT/config.yaml" >"$OUT/scheduler.log" 2>&1 &
	pids+=($!)
}
