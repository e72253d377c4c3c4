package snapshot_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/credscope"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/snapshot"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	os.Exit(code)
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files into the work tree at dir and commits them.
func commit(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "change")
	return git(t, dir, "rev-parse", "HEAD")
}

// remote is a work tree whose commits are pushed to a bare repository
// that plays the remote.
type remote struct {
	work, bare string
}

func newRemote(t *testing.T) remote {
	t.Helper()
	root := t.TempDir()
	r := remote{work: filepath.Join(root, "work"), bare: filepath.Join(root, "srv", "repo.git")}
	if err := os.MkdirAll(r.work, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, r.work, "init", "-q", "-b", "main")
	commit(t, r.work, map[string]string{"README.md": "hello\n", "lib/util.go": "package lib\n\nfunc Util() {}\n"})
	git(t, root, "clone", "-q", "--bare", r.work, r.bare)
	git(t, r.work, "remote", "add", "origin", r.bare)
	return r
}

// push commits files and pushes main; it returns the commit.
func (r remote) push(t *testing.T, files map[string]string) string {
	t.Helper()
	sha := commit(t, r.work, files)
	git(t, r.work, "push", "-q", "origin", "main")
	return sha
}

// submitReview prepares base..head of repoURL with the submitting host's
// cache and stores it.
func submitReview(t *testing.T, st *store.Store, repos *snapshot.Cache, repoURL, base, head string) review.Review {
	t.Helper()
	ctx := context.Background()
	nr, err := submit.Prepare(ctx, config.Default(), submit.Request{Origin: submit.FromOperator, Repo: repoURL, Base: base, Head: head, Repos: repos})
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	id, err := st.CreateReview(ctx, nr)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.GetReview(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readAt(t *testing.T, root, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatalf("read %s from the snapshot: %v", name, err)
	}
	return string(data)
}

// TestWorkerFetchesNewerCommit: a worker whose clone predates a review's
// head commit fetches it and exports the whole tree instead of falling
// back to the changed files.
func TestWorkerFetchesNewerCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	rem := newRemote(t)
	url := "file://" + rem.bare
	submitter := &snapshot.Cache{Dir: t.TempDir()}
	worker := &snapshot.Cache{Dir: t.TempDir(), Store: st}

	base := git(t, rem.work, "rev-parse", "HEAD")
	head1 := rem.push(t, map[string]string{"lib/a.go": "package lib\n\nconst A = 1\n"})
	r1 := submitReview(t, st, submitter, url, base, head1)
	root, release, err := worker.Acquire(ctx, r1)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAt(t, root, "lib/util.go"); got != "package lib\n\nfunc Util() {}\n" {
		t.Errorf("unchanged file = %q", got)
	}
	release()

	// A newer commit: the worker's clone does not have it yet.
	head2 := rem.push(t, map[string]string{"lib/b.go": "package lib\n\nconst B = 2\n"})
	r2 := submitReview(t, st, submitter, url, head1, head2)
	root, release, err = worker.Acquire(ctx, r2)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if got := readAt(t, root, "lib/b.go"); got != "package lib\n\nconst B = 2\n" {
		t.Errorf("changed file = %q", got)
	}
	if got := readAt(t, root, "README.md"); got != "hello\n" {
		t.Errorf("unchanged file = %q: the worker fell back to the changed files", got)
	}
	for _, r := range []review.Review{r1, r2} {
		got, err := st.GetReview(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.SnapshotFallback != "" {
			t.Errorf("review %s fell back: %s", r.ID, got.SnapshotFallback)
		}
	}
	// Fetched by its id, not with every branch.
	remote, err := worker.Remote(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, worker.RepoDir(remote), "rev-parse", "refs/reviewfleet/"+head2); got != head2 {
		t.Errorf("refs/reviewfleet/%s = %s", head2, got)
	}
}

// TestFallbackIsRecorded: a head commit the remote does not have makes
// the worker write out the stored changed files, and the review says why.
func TestFallbackIsRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	rem, base, head, r := submittedChange(t, st)
	// The remote loses the commit (a force push that dropped it).
	git(t, rem.bare, "update-ref", "refs/heads/main", base)
	git(t, rem.bare, "reflog", "expire", "--expire=now", "--all")
	git(t, rem.bare, "gc", "-q", "--prune=now")

	var logs bytes.Buffer
	worker := &snapshot.Cache{Dir: t.TempDir(), Store: st, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	// While the task will be tried again, the failure is an error, not a
	// fallback: a remote can be down for a moment.
	worker.Retryable = func(context.Context) bool { return true }
	if _, _, err := worker.Acquire(ctx, r); err == nil || !strings.Contains(err.Error(), head) {
		t.Fatalf("Acquire on a retryable attempt = %v, want an error naming %s", err, head)
	}
	if got, err := st.GetReview(ctx, r.ID); err != nil || got.SnapshotFallback != "" {
		t.Fatalf("fallback recorded on a retryable attempt: %q, %v", got.SnapshotFallback, err)
	}
	worker.Retryable = func(context.Context) bool { return false }
	root, release, err := worker.Acquire(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if got := readAt(t, root, "lib/a.go"); got != "package lib\n\nconst A = 1\n" {
		t.Errorf("stored changed file = %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "README.md")); err == nil {
		t.Error("an unchanged file is in a fallback snapshot")
	}
	got, err := st.GetReview(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.SnapshotFallback, head) {
		t.Errorf("snapshot_fallback = %q, want the reason naming %s", got.SnapshotFallback, head)
	}
	if !strings.Contains(logs.String(), "falls back") {
		t.Errorf("the fallback was not logged: %s", logs.String())
	}
	// A later expert run of the review gets the same files without trying
	// the remote again.
	logs.Reset()
	again, release2, err := worker.Acquire(ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	release2()
	if again != root || logs.Len() != 0 {
		t.Errorf("second run: root %s (first %s), logs %q", again, root, logs.String())
	}
}

// TestReplacesCloneWithWorkTree: a clone left by an earlier version, with
// a work tree, is replaced by a bare one.
func TestReplacesCloneWithWorkTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rem := newRemote(t)
	url := "file://" + rem.bare
	head := rem.push(t, map[string]string{"lib/a.go": "package lib\n"})
	worker := &snapshot.Cache{Dir: t.TempDir()}
	remote, err := worker.Remote(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	old := worker.RepoDir(remote)
	git(t, rem.work, "clone", "-q", "--no-checkout", url, old)
	root, release, err := worker.Acquire(ctx, review.Review{ID: "r", Source: "url", Repo: url, HeadSHA: head})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if got := readAt(t, root, "lib/a.go"); got != "package lib\n" {
		t.Errorf("lib/a.go = %q", got)
	}
	if got := git(t, old, "rev-parse", "--is-bare-repository"); got != "true" {
		t.Errorf("the clone is still not bare")
	}
}

// TestCredentialsStayOutOfStoreAndLogs serves the remote over http with
// git http-backend behind a token check. The token given in the URL at
// submission and the worker's token file are used, and appear in no stored
// column, no clone configuration and no log line.
func TestCredentialsStayOutOfStoreAndLogs(t *testing.T) {
	t.Parallel()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	st := stagetest.Store(t)
	rem := newRemote(t)
	base := git(t, rem.work, "rev-parse", "HEAD")
	head1 := rem.push(t, map[string]string{"lib/a.go": "package lib\n\nconst A = 1\n"})
	const submitToken, workerToken = "sub-s3cret-9f8e7d", "wrk-s3cret-1a2b3c"
	allowed := map[string]bool{}
	for _, tok := range []string{submitToken, workerToken} {
		allowed["Basic "+base64.StdEncoding.EncodeToString([]byte("x-access-token:"+tok))] = true
	}
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(rem.bare), "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !allowed[req.Header.Get("Authorization")] {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, req)
	}))
	defer srv.Close()
	clean := srv.URL + "/repo.git"
	withToken := strings.Replace(clean, "http://", "http://"+submitToken+"@", 1)

	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	submitter := &snapshot.Cache{Dir: t.TempDir(), Log: log}
	r1 := submitReview(t, st, submitter, withToken, base, head1)
	if r1.Repo != clean {
		t.Errorf("stored repo = %q, want %q", r1.Repo, clean)
	}

	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(workerToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	worker := &snapshot.Cache{Dir: t.TempDir(), Store: st, TokenFile: tokenFile, Log: log,
		TokenScopes: credscope.Set{credscope.MustParse(srv.URL)}}
	head2 := rem.push(t, map[string]string{"lib/b.go": "package lib\n"})
	for _, r := range []review.Review{r1, submitReview(t, st, submitter, withToken, head1, head2)} {
		root, release, err := worker.Acquire(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAt(t, root, "README.md"); got != "hello\n" {
			t.Errorf("unchanged file = %q", got)
		}
		release()
	}

	var dump bytes.Buffer
	rows, err := st.ListReviews(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.SnapshotFallback != "" {
			t.Errorf("review %s fell back: %s", r.ID, r.SnapshotFallback)
		}
		dump.WriteString(r.Repo + "\n" + r.Snapshot + "\n" + r.SnapshotFallback + "\n" + string(r.Config) + "\n")
	}
	for _, tok := range []string{submitToken, workerToken} {
		if strings.Contains(dump.String(), tok) {
			t.Errorf("a token is stored in the reviews table:\n%s", dump.String())
		}
		if strings.Contains(logs.String(), tok) {
			t.Errorf("a token is in the logs:\n%s", logs.String())
		}
		for _, dir := range []string{submitter.Dir, worker.Dir} {
			if out, err := exec.Command("grep", "-r", "-l", tok, dir).CombinedOutput(); err == nil {
				t.Errorf("a token is written in the cache: %s", out)
			}
		}
	}
}

// TestSubmitFetchesMovedBranch: a branch named at submission is fetched
// first, so a cached clone does not review where it used to point.
func TestSubmitFetchesMovedBranch(t *testing.T) {
	t.Parallel()
	st := stagetest.Store(t)
	rem := newRemote(t)
	url := "file://" + rem.bare
	base := git(t, rem.work, "rev-parse", "HEAD")
	head1 := rem.push(t, map[string]string{"lib/a.go": "package lib\n"})
	submitter := &snapshot.Cache{Dir: t.TempDir()}
	if r := submitReview(t, st, submitter, url, base, "main"); r.HeadSHA != head1 {
		t.Fatalf("first head = %s, want %s", r.HeadSHA, head1)
	}
	head2 := rem.push(t, map[string]string{"lib/b.go": "package lib\n"})
	if r := submitReview(t, st, submitter, url, base, "main"); r.HeadSHA != head2 {
		t.Fatalf("head after the branch moved = %s, want %s", r.HeadSHA, head2)
	}
}

// TestDiffWithoutRepositoryFallsBackWithAReason: a diff reviewed without
// its repository has only its changed files, and the reason recorded says
// so without a blank path.
func TestDiffWithoutRepositoryFallsBackWithAReason(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := stagetest.Store(t)
	diffFile := filepath.Join(t.TempDir(), "change.diff")
	if err := os.WriteFile(diffFile, []byte("--- /dev/null\n+++ b/app/db.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nr, err := submit.Prepare(ctx, config.Default(), submit.Request{Origin: submit.FromOperator, DiffFile: diffFile})
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.CreateReview(ctx, nr)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.GetReview(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	root, release, err := (&snapshot.Cache{Dir: t.TempDir(), Store: st}).Acquire(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if got := readAt(t, root, "app/db.py"); got != "x = 1\ny = 2\n" {
		t.Errorf("changed file = %q", got)
	}
	got, err := st.GetReview(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.SnapshotFallback, "without its repository") || strings.Contains(got.SnapshotFallback, "  ") ||
		strings.Contains(got.SnapshotFallback, "()") {
		t.Errorf("snapshot_fallback = %q", got.SnapshotFallback)
	}
}

// submittedChange pushes one change to a new remote and submits a review
// of it over file://, returning the remote, the base and head commits and
// the stored review.
func submittedChange(t *testing.T, st *store.Store) (rem remote, base, head string, r review.Review) {
	t.Helper()
	rem = newRemote(t)
	base = git(t, rem.work, "rev-parse", "HEAD")
	head = rem.push(t, map[string]string{"lib/a.go": "package lib\n\nconst A = 1\n"})
	r = submitReview(t, st, &snapshot.Cache{Dir: t.TempDir()}, "file://"+rem.bare, base, head)
	return rem, base, head, r
}
