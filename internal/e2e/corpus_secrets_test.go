package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/redact/secrettest"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
)

// corpusRepo commits every sample of the secret corpus at its path, plus
// the places a secret hides outside file contents: a line the change
// deletes, the commit message, a file name, the head branch's name and a
// text file with a NUL byte past git's binary check. It returns the
// repository, the head branch and every secret value.
func corpusRepo(t *testing.T) (dir, head string, secrets []string) {
	t.Helper()
	dir = t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	write := func(rel, s string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const (
		deleted  = "sk_live_Vq8Lm3Xt7Rp2Wk9Nc4Hy6Bf1"
		message  = "glpat-Tq7Wm2Xv9Lp4Rk8Nc3Hy"
		fileName = "ghp_Wd4Kq9Xm2Lt7Rp3Vn8Hc6Yb1Fs5Gj0Ae2Zu7"
		branch   = "sk_live_Hn5Rt8Wq2Xm7Lp3Vk9Cb4Yd6"
		nulToken = "xoxb-184203957361-590317284650-Qm8Vt3Xr7Lp2Wk9Nc4Hy6Bf1"
	)
	write("scripts/old.sh", "#!/bin/sh\nexport STRIPE_KEY=\""+deleted+"\"\necho ok\n")
	write("README.md", "# app\n")
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	head = "feat-" + branch
	git("checkout", "-q", "-b", head)

	write("scripts/old.sh", "#!/bin/sh\necho ok\n")
	seen := map[string]bool{}
	for _, s := range secrettest.Samples() {
		if seen[s.File] {
			t.Fatalf("two samples at %s", s.File)
		}
		seen[s.File] = true
		write(s.File, s.Text)
		secrets = append(secrets, s.Secrets...)
	}
	write("keys/"+fileName+".txt", "issued 2024\n")
	write("notes/late-nul.txt", strings.Repeat("plain text line\n", 600)+"slack = \""+nulToken+"\"\n\x00\n")
	git("add", "-A")
	git("commit", "-q", "-m", "Add service configuration\n\nTemporary token "+message+" until the vault is ready.")
	return dir, head, append(secrets, deleted, message, fileName, branch, nulToken)
}

// recorder keeps every request's body. Intent reports the Stripe key of
// billing.go, so the later stages run and the expert reads files of the
// snapshot; every other answer comes from the request's schema.
type recorder struct {
	mu     sync.Mutex
	bodies []string
}

func (m *recorder) handle(_ context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
	body, _ := json.Marshal(req)
	m.mu.Lock()
	m.bodies = append(m.bodies, string(body))
	m.mu.Unlock()
	switch llmfake.SchemaName(req) {
	case "reviewfleet_intent":
		if !strings.Contains(llmfake.LastUser(req), "billing.go") {
			return llmfake.JSON(map[string]any{"findings": []any{}})
		}
		return llmfake.JSON(map[string]any{"findings": []any{map[string]any{
			"file": "billing.go", "line_start": 1, "line_end": 1, "risk_type": "authorization",
			"description": "A live Stripe key is committed in the source.",
			"suggestion":  "Load it from the environment and rotate it.", "quote": "", "fix": "",
			"severity": "critical", "confidence": 0.9,
		}}})
	case "reviewfleet_verify":
		return llmfake.JSON(map[string]any{"evidence": "the marker is on the line", "anchored": true, "adjusted_confidence": 0.9})
	}
	if len(req.Tools) > 0 {
		if len(req.Messages) <= 2 {
			return llmfake.Tools(
				llmfake.ToolCall("read_file", map[string]any{"path": "billing.go"}),
				llmfake.ToolCall("read_file", map[string]any{"path": "redis.conf"}),
				llmfake.ToolCall("read_file", map[string]any{"path": "notes/late-nul.txt"}),
				llmfake.ToolCall("read_file", map[string]any{"path": "web/.npmrc"}))
		}
		return llmfake.Tools(llmfake.ToolCall("submit_verdict", map[string]any{
			"verdict": "confirmed", "confidence": 0.9, "reasoning": "a key is hard-coded", "evidence": []map[string]any{},
		}))
	}
	return llmfake.FromSchema(req)
}

// TestCorpusSecretsStayOut reviews a change holding every format of the
// secret corpus: no raw value reaches a request to the model, any row of
// any table of the review's database, or the snapshot cache on disk (file
// contents and names).
func TestCorpusSecretsStayOut(t *testing.T) {
	t.Parallel()
	t.Run("repo", func(t *testing.T) {
		t.Parallel()
		checkCorpusReview(t, func(dir, head string) submit.Request {
			return submit.Request{Origin: submit.FromOperator, Repo: dir, Base: "main", Head: head}
		})
	})
	// A diff reviewed against its work tree: the submission captures and
	// redacts the snapshot itself.
	t.Run("diff", func(t *testing.T) {
		t.Parallel()
		checkCorpusReview(t, func(dir, head string) submit.Request {
			out, err := exec.Command("git", "-C", dir, "diff", "main", head).Output()
			if err != nil {
				t.Fatal(err)
			}
			patch := filepath.Join(t.TempDir(), "change.diff")
			if err := os.WriteFile(patch, out, 0o644); err != nil {
				t.Fatal(err)
			}
			return submit.Request{Origin: submit.FromOperator, Repo: dir, DiffFile: patch, Purpose: "Temporary token glpat-Tq7Wm2Xv9Lp4Rk8Nc3Hy until the vault is ready."}
		})
	})
}

func checkCorpusReview(t *testing.T, request func(dir, head string) submit.Request) {
	model := &recorder{}
	f := newFleet(t, model.handle, nil)
	dir, head, secrets := corpusRepo(t)
	r := f.review(t, request(dir, head))
	if r.Status != review.ReviewDone {
		t.Fatalf("status %s: %s", r.Status, r.Error)
	}
	var leaks []string
	check := func(where, text string) {
		for _, v := range secrets {
			if strings.Contains(text, v) {
				leaks = append(leaks, fmt.Sprintf("%q in %s", v, where))
			}
		}
	}

	model.mu.Lock()
	for i, b := range model.bodies {
		check(fmt.Sprintf("request %d to the model", i+1), b)
	}
	nreq := len(model.bodies)
	model.mu.Unlock()
	if nreq == 0 {
		t.Fatal("no request reached the model")
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, f.cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	nrows := 0
	for _, table := range tables {
		rows, err := conn.Query(ctx, `SELECT row_to_json(t)::text FROM `+pgx.Identifier{table}.Sanitize()+` t`)
		if err != nil {
			t.Fatal(err)
		}
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			check("table "+table, text)
		}
		nrows += len(texts)
	}

	nfiles := 0
	err = filepath.WalkDir(f.cfg.Expert.SnapshotDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		check("snapshot path "+p, p)
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			check("snapshot file "+p, string(data))
			nfiles++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leaks {
		t.Error(l)
	}
	t.Logf("%d secrets checked in %d requests, %d rows of %d tables, %d snapshot files", len(secrets), nreq, nrows, len(tables), nfiles)

	// The denied and secret-named files are listed as not reviewed.
	files, err := f.sub.Store.ListFiles(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	named := ""
	for _, fl := range files {
		reasons[fl.Path] = fl.SkipReason
		if strings.HasPrefix(fl.Path, "keys/[REDACTED:github-token:") && strings.HasSuffix(fl.Path, "].txt") {
			named = fl.Path
		}
	}
	if named == "" {
		t.Errorf("the file named by a token is not listed under its marker: %v", reasons)
	}
	for p, want := range map[string]string{"web/.npmrc": "denied", "deploy/kubeconfig": "denied", "keys/server.ppk": "denied", named: submit.ReasonSecretName} {
		if got, ok := reasons[p]; !ok || got != want {
			t.Errorf("%s: skip reason %q (listed %v), want %q", p, got, ok, want)
		}
	}
}
