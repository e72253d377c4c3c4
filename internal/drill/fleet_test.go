package drill

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Shutdown()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// binary builds the reviewfleet command once per test process.
func binary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "reviewfleet-drill-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "reviewfleet")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/reviewfleet/reviewfleet/cmd/reviewfleet").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("build reviewfleet: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// fleet is worker processes, an in-process scheduler and a submitter
// around a redis-server of the test's own.
type fleet struct {
	t     *testing.T
	bin   string
	dir   string
	redis *testenv.RedisServer
	llm   *llmfake.Server
	cfg   config.Config
	sub   *app.App
	repo  submit.Request
	env   []string

	mu    sync.Mutex
	procs []*worker
}

// worker is one worker process.
type worker struct {
	cmd  *exec.Cmd
	id   chan string // the worker's ID once it logged it
	done chan struct{}
}

var workerLine = regexp.MustCompile(`^worker (\S+): serving`)

// llmDelay answers like the demo exchange after a delay, so that work is
// in flight when a fault strikes.
func llmDelay(d time.Duration, hold func()) llmfake.Handler {
	return func(ctx context.Context, req openai.ChatCompletionRequest) llmfake.Reply {
		if hold != nil {
			hold()
		}
		r := demo.Handler(ctx, req)
		r.Delay = d
		return r
	}
}

func newFleet(t *testing.T, h llmfake.Handler, edit func(*config.Config)) *fleet {
	t.Helper()
	bin := binary(t)
	srv := testenv.StartRedisServer(t)
	llm := llmfake.New(h)
	t.Cleanup(llm.Close)
	dir := t.TempDir()
	cfg := config.Default()
	cfg.DatabaseURL = testenv.IsolatedSchema(t)
	cfg.RedisURL = srv.URL(0)
	cfg.LLM.BaseURL, cfg.LLM.APIKey = llm.URL, "test"
	cfg.Expert.SnapshotDir = filepath.Join(dir, "snapshots")
	cfg.Worker.TaskCheckInterval = 20 * time.Millisecond
	cfg.Scheduler.Interval = 2 * time.Second
	cfg.Scheduler.RequeueAfter = 5 * time.Second
	if edit != nil {
		edit(&cfg)
	}
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sub, err := app.Open(ctx, cfg, app.Options{Migrate: true, SkipLLM: true, Log: quiet})
	if err != nil {
		t.Fatalf("open submitter: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "repo"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := demo.WriteRepo(ctx, filepath.Join(dir, "repo"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{
		t: t, bin: bin, dir: dir, redis: srv, llm: llm, cfg: cfg, sub: sub,
		repo: submit.Request{Origin: submit.FromOperator, Repo: r.Dir, Base: r.Base, Head: r.Head},
		env: append(os.Environ(),
			"DATABASE_URL="+cfg.DatabaseURL, "REDIS_URL="+cfg.RedisURL,
			"OPENAI_BASE_URL="+llm.URL, "OPENAI_API_KEY=test",
			"REVIEWFLEET_WORKER_HEALTH_ADDR=127.0.0.1:0",
			"REVIEWFLEET_WORKER_TASK_CHECK_INTERVAL=20ms",
			"REVIEWFLEET_EXPERT_SNAPSHOT_DIR="+cfg.Expert.SnapshotDir,
		),
	}
	t.Cleanup(func() {
		f.mu.Lock()
		procs := f.procs
		f.mu.Unlock()
		for _, p := range procs {
			f.kill(p)
		}
		sub.Close()
	})
	return f
}

// startWorker starts a worker process.
func (f *fleet) startWorker() *worker {
	f.t.Helper()
	cmd := exec.Command(f.bin, "worker")
	cmd.Env = f.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		f.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		f.t.Fatalf("start worker: %v", err)
	}
	w := &worker{cmd: cmd, id: make(chan string, 1), done: make(chan struct{})}
	logf, _ := os.OpenFile(filepath.Join(f.dir, fmt.Sprintf("worker-%d.log", cmd.Process.Pid)), os.O_CREATE|os.O_WRONLY, 0o644)
	go func() {
		defer close(w.done)
		defer logf.Close()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if m := workerLine.FindStringSubmatch(sc.Text()); m != nil {
				w.id <- m[1]
			}
			fmt.Fprintln(logf, sc.Text())
		}
		_ = cmd.Wait()
	}()
	f.mu.Lock()
	f.procs = append(f.procs, w)
	f.mu.Unlock()
	return w
}

// kill sends SIGKILL and waits for the process to end.
func (f *fleet) kill(w *worker) {
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.done
}

// scheduler runs the reconciler in this process until the test ends.
func (f *fleet) scheduler() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	rec := f.sub.Reconciler()
	go func() { defer close(done); _ = rec.Run(ctx, f.cfg.Scheduler.Interval) }()
	f.t.Cleanup(func() { cancel(); <-done })
}

// submit submits n reviews of the demo change.
func (f *fleet) submit(n int) []string {
	f.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		id, err := f.sub.Submit(context.Background(), f.repo)
		if err != nil {
			f.t.Fatalf("submit review %d: %v", i, err)
		}
		ids[i] = id
	}
	return ids
}

// wait polls until every review ended or the timeout passed, and returns
// each review's status and the time it ended.
func (f *fleet) wait(ids []string, timeout time.Duration) map[string]review.Review {
	f.t.Helper()
	deadline := time.Now().Add(timeout)
	out := map[string]review.Review{}
	for {
		for _, id := range ids {
			if _, ok := out[id]; ok {
				continue
			}
			r, err := f.sub.Store.GetReview(context.Background(), id)
			if err != nil {
				f.t.Fatal(err)
			}
			if r.Status == review.ReviewDone || r.Status == review.ReviewFailed {
				out[id] = r
			}
		}
		if len(out) == len(ids) || time.Now().After(deadline) {
			return out
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// rows counts a review's findings, verdicts and expert runs.
type rows struct{ findings, verdicts, expertRuns, failedItems int }

func (f *fleet) rows(id string) rows {
	f.t.Helper()
	ctx := context.Background()
	fs, err := f.sub.Store.ListFindings(ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	vs, err := f.sub.Store.ListVerdicts(ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	runs, err := f.sub.Store.ListExpertRuns(ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	failed, err := f.sub.Store.FailedItems(ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return rows{len(fs), len(vs), len(runs), len(failed)}
}

// checkOutcomes fails the test for a review that did not end or holds more
// rows than a review run without faults (a duplicated write), and returns
// how many ended exactly like the reference.
func (f *fleet) checkOutcomes(ids []string, ended map[string]review.Review, ref rows) (same int) {
	f.t.Helper()
	for _, id := range ids {
		r, ok := ended[id]
		if !ok {
			f.t.Errorf("review %s did not end", id)
			continue
		}
		got := f.rows(id)
		if got.findings > ref.findings || got.verdicts > ref.verdicts || got.expertRuns > ref.expertRuns {
			f.t.Errorf("review %s (%s) holds %+v, more than a review without faults (%+v): a duplicated write", id, r.Status, got, ref)
		}
		if r.Status == review.ReviewDone && got == ref {
			same++
		}
	}
	return same
}

// percentile returns the p-th percentile of ds (p in 0..100).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	return s[max(0, min(i-1, len(s)-1))]
}

// processDrill skips a test that builds the binary and drives worker
// processes into faults (kills them, fills their disk) unless it was asked
// for: such a test takes half a minute on an idle machine and much longer
// on a busy one, which a plain `go test ./...` should not pay. .ci/run sets
// REVIEWFLEET_DRILL=1; DRILL=1 (the long drills) implies it.
func processDrill(t *testing.T) {
	t.Helper()
	if testing.Short() || (os.Getenv("REVIEWFLEET_DRILL") != "1" && os.Getenv("DRILL") != "1") {
		t.Skip("builds the binary and drives worker processes into faults: run with REVIEWFLEET_DRILL=1 (.ci/run sets it)")
	}
}

func drillOnly(t *testing.T) {
	t.Helper()
	if os.Getenv("DRILL") != "1" {
		t.Skip("a fault drill of a minute or more: run with DRILL=1 (scripts/drill.sh)")
	}
}
