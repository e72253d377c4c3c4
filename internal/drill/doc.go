// Package drill holds the fault drills of the fleet as tests: worker
// processes killed at random moments, Redis flushed and restarted without
// persistence while reviews run, and the time a killed worker's items take
// to run again. They build the reviewfleet binary, start a redis-server of
// their own and use the test Postgres and the fake LLM server, so a plain
// `go test ./...` skips them: the short drill runs with REVIEWFLEET_DRILL=1
// (which .ci/run sets), the long ones only with DRILL=1 (scripts/drill.sh).
// RELIABILITY.md holds their figures.
package drill
