package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

func TestPruneArgumentErrors(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	env["DATABASE_URL"] = "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1"
	for _, args := range [][]string{
		{"prune", "--older-than", "90x"},
		{"prune", "--older-than", "0d"},
		{"prune", "--batch-size", "-1"},
	} {
		_, _, err := runEnv(t, env, args...)
		var ee exitError
		if !errors.As(err, &ee) || ee.code != exitUsage {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// An old demo review: --keep-verdicts drops its prompts and report (which
// `report` renders again), then a full prune deletes it.
func TestPruneCommand(t *testing.T) {
	t.Parallel()
	env := testEnv{}
	ctx := context.Background()
	dsn := testenv.IsolatedSchema(t)
	env["DATABASE_URL"] = dsn
	env["REVIEWFLEET_EXPERT_SNAPSHOT_DIR"] = t.TempDir()
	if _, stderr, err := runEnv(t, env, "review", "--demo"); err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var id string
	var calls int
	if err := conn.QueryRow(ctx, `UPDATE reviews SET created_at = now() - interval '100 days' RETURNING id::text, llm_calls`).Scan(&id, &calls); err != nil {
		t.Fatal(err)
	}

	out, _, err := runEnv(t, env, "prune", "--older-than", "120d")
	if err != nil || !strings.Contains(out, "deleted 0 stored llm calls") || !strings.Contains(out, "deleted 0 reviews") {
		t.Fatalf("prune of nothing: %v\n%s", err, out)
	}
	out, _, err = runEnv(t, env, "prune", "--older-than", "90d", "--keep-verdicts", "--dry-run")
	if err != nil || !strings.Contains(out, "would delete 1 reports") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	out, _, err = runEnv(t, env, "prune", "--older-than", "90d", "--keep-verdicts", "--batch-size", "5")
	if err != nil || !strings.Contains(out, "deleted 1 reports") || strings.Contains(out, "deleted 0 stored llm calls") {
		t.Fatalf("prune --keep-verdicts: %v\n%s", err, out)
	}
	var left int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM llm_calls`).Scan(&left); err != nil || left != 0 {
		t.Errorf("stored calls left: %d %v", left, err)
	}
	if out, _, err := runEnv(t, env, "report", id); err != nil || !strings.Contains(out, "#") {
		t.Errorf("report after --keep-verdicts: %v\n%s", err, out)
	}
	out, _, err = runEnv(t, env, "prune", "--older-than", "90d")
	if err != nil || !strings.Contains(out, "deleted 1 reviews") {
		t.Fatalf("prune: %v\n%s", err, out)
	}
	if _, _, err := runEnv(t, env, "report", id); err == nil || !strings.Contains(err.Error(), "no review") {
		t.Errorf("report of a pruned review: %v", err)
	}
}
