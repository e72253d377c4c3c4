package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/bulk"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

// hostileName is a file name carrying markup: the console must show it
// as text and never run it.
const hostileName = `<img src=x onerror=alert(1)>.go`

// hostileLine is an added line whose finding description carries markup.
const hostileLine = `// BUG: <script>alert(2)</script> unchecked error`

// fleetRun is a fleet that has reviewed a batch: the console reads it.
type fleetRun struct {
	cfg     config.Config
	app     *app.App
	batchID string
	// readerDSN connects as a login member of reviewfleet_console.
	readerDSN string
}

// gitRepo writes a repository whose head commit adds files with markers
// (the scripted reviewer reports a finding at each).
func gitRepo(t *testing.T, files map[string]string) (dir, base, head string) {
	t.Helper()
	dir = t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=console test", "-c", "user.email=test@example.invalid",
			"-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	base = git("rev-parse", "HEAD")
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", "-A")
	git("commit", "-q", "-m", "change")
	head = git("rev-parse", "HEAD")
	return dir, base, head
}

// runFleet reviews a batch of three repositories with a worker and a
// reconciler against the scripted marker reviewer, and waits until every
// review has ended.
func runFleet(t *testing.T) *fleetRun {
	t.Helper()
	ctx := context.Background()
	llm := llmfake.New(llmfake.Markers(""))
	t.Cleanup(llm.Close)
	cfg := config.Default()
	cfg.DatabaseURL = testenv.IsolatedSchema(t)
	cfg.RedisURL = testenv.RedisURL(t)
	cfg.LLM.BaseURL, cfg.LLM.APIKey = llm.URL, "test"
	cfg.LLM.MaxAttempts = 1
	cfg.Worker.HealthAddr = ""
	cfg.Worker.MaxRetry = 1
	cfg.Worker.TaskCheckInterval = 20 * time.Millisecond
	cfg.Expert.SnapshotDir = t.TempDir()
	cfg.Snapshot.AllowLoopbackHTTP = true
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := app.Open(ctx, cfg, app.Options{Migrate: true, Log: quiet})
	if err != nil {
		t.Fatalf("open the fleet: %v", err)
	}
	t.Cleanup(a.Close)
	wa, err := app.Open(ctx, cfg, app.Options{Log: quiet})
	if err != nil {
		t.Fatalf("open the worker: %v", err)
	}
	t.Cleanup(wa.Close)
	w, err := wa.NewWorker(cfg.Worker)
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	go func() { _ = w.Run(wctx); done <- struct{}{} }()
	rec := wa.Reconciler()
	go func() { _ = rec.Run(wctx, 200*time.Millisecond); done <- struct{}{} }()
	t.Cleanup(func() { stop(); <-done; <-done })

	gh := githubfake.New()
	t.Cleanup(gh.Close)
	repos := []map[string]string{
		{hostileName: "package x\n\n" + hostileLine + "\nfunc f() {}\n"},
		{"store.go": "package store\n\n// BUG: the lock is released twice\nfunc Put() {}\n", "api.go": "package api\n\n// BUG: no size limit on the body\nfunc Serve() {}\n"},
		{"main.go": "package main\n\nfunc main() {}\n"},
	}
	var entries []bulk.Entry
	for i, files := range repos {
		dir, base, head := gitRepo(t, files)
		u, err := gh.ServePublicGit("acme", fmt.Sprint("r", i), filepath.Join(dir, ".git"))
		if err != nil {
			t.Skipf("no git http backend: %v", err)
		}
		entries = append(entries, bulk.Entry{Line: i + 1, Repo: u, Base: base, Head: head,
			Labels: map[string]string{"team": []string{"payments", "core", "core"}[i]}})
	}
	sub := &bulk.Submitter{Store: a.Store, Reviews: a, Concurrency: 2}
	res, err := sub.Submit(ctx, bulk.Spec{Name: "console <b>check</b>", Source: "test", Entries: entries,
		Labels: map[string]string{"purpose": "console"}})
	if err != nil {
		t.Fatalf("submit the batch: %v", err)
	}
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		p, err := a.Store.GetBatchProgress(wait, res.Batch.ID)
		if err != nil {
			t.Fatalf("batch progress: %v", err)
		}
		if p.Reviews == len(entries) && p.Remaining() == 0 {
			break
		}
		select {
		case <-wait.Done():
			t.Fatalf("the batch did not end: %+v", p)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return &fleetRun{cfg: cfg, app: a, batchID: res.Batch.ID, readerDSN: readerRole(t, cfg.DatabaseURL)}
}

// readerRole creates a login role that is a member of reviewfleet_console
// and returns dsn connecting as it.
func readerRole(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("rf_console_test_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, `CREATE ROLE `+name+` LOGIN IN ROLE reviewfleet_console`); err != nil {
		t.Skipf("cannot create a login role for the console (%v)", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), dsn)
		if err == nil {
			_, _ = c.Exec(context.Background(), `DROP ROLE IF EXISTS `+name)
			c.Close(context.Background())
		}
	})
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u := strings.Replace(dsn, "://"+cfg.User+"@", "://"+name+"@", 1)
	if u == dsn {
		t.Fatalf("cannot put the reader role into %s", dsn)
	}
	return u
}

// dbReview is a review as the database has it.
type dbReview struct {
	ID, Repo, Status string
	Reported         []dbFinding
}

type dbFinding struct {
	ID     int64
	File   string
	Line   int
	Stages []string
}

// batchFromDB reads the batch's reviews, their statuses and the findings
// their reports list, with the stages that judged each.
func batchFromDB(t *testing.T, st *store.Store, batchID string) (store.BatchProgress, []dbReview) {
	t.Helper()
	ctx := context.Background()
	p, err := st.GetBatchProgress(ctx, batchID)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := st.BatchEntries(ctx, batchID)
	if err != nil {
		t.Fatal(err)
	}
	var out []dbReview
	for _, e := range entries {
		r, err := st.GetReview(ctx, e.ReviewID)
		if err != nil {
			t.Fatal(err)
		}
		d := dbReview{ID: r.ID, Repo: r.Repo, Status: string(r.Status)}
		rep, err := st.GetReport(ctx, r.ID)
		if err == nil {
			ids := reportedIDs(t, rep.JSON)
			vs, err := st.ListVerdicts(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				f, err := st.GetFinding(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				df := dbFinding{ID: id, File: f.File, Line: f.LineStart}
				for _, v := range vs {
					if v.FindingID == id {
						df.Stages = append(df.Stages, string(v.Stage))
					}
				}
				d.Reported = append(d.Reported, df)
			}
		}
		out = append(out, d)
	}
	return p, out
}

func reportedIDs(t *testing.T, doc []byte) []int64 {
	t.Helper()
	var r struct {
		Findings []struct {
			ID int64 `json:"id"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(doc, &r); err != nil {
		t.Fatalf("report json: %v", err)
	}
	var out []int64
	for _, f := range r.Findings {
		out = append(out, f.ID)
	}
	return out
}
