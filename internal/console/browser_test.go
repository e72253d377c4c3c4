package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/reviewfleet/reviewfleet/internal/console"
)

const testToken = "console-test-token-0123456789"

// chromiumPath finds Debian's chromium; without it the browser tests are
// skipped, except in CI, where its absence is a failure (.ci/run installs it).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (apt-get install -y chromium): the console's browser tests cannot run")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium): skipping the console's browser tests")
	return ""
}

// browser starts a headless chromium with a profile of its own and
// records every JavaScript dialog (alert, confirm, prompt) a page opens.
type browser struct {
	ctx     context.Context
	mu      sync.Mutex
	dialogs []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromiumPath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	b := &browser{ctx: ctx}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.dialogs = append(b.dialogs, string(ev.Type)+": "+ev.Message)
			b.mu.Unlock()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return b
}

func (b *browser) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func get[T any](t *testing.T, b *browser, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func (b *browser) text(t *testing.T, css string) string {
	t.Helper()
	return get(t, b, "text of "+css, chromedp.Text(chromedp.CSS(css)))
}

func (b *browser) noDialogs(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.dialogs) > 0 {
		t.Fatalf("a page opened JavaScript dialogs: injected markup ran: %q", b.dialogs)
	}
}

// screenshotDir is where screenshots go: CONSOLE_SCREENSHOTS (the docs
// use docs/console) or a temporary directory.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("CONSOLE_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

func (b *browser) screenshot(t *testing.T, dir, name string) {
	t.Helper()
	buf := get(t, b, "screenshot "+name, chromedp.CaptureScreenshot())
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConsoleInBrowser runs a batch through a fleet with a scripted model
// and reads it back through the console in headless chromium: every
// review of the batch with its status, every reported finding at its
// file:line with its verdict trail, the progress numbers the database
// has; links are followed; markup from a file name and a model's reply
// shows as text and never runs; and without signing in every page is
// refused.
func TestConsoleInBrowser(t *testing.T) {
	chromiumPath(t) // skip before running the fleet
	f := runFleet(t)
	cfg := f.cfg
	cfg.Console.Token = testToken
	cfg.Console.DatabaseURL = f.readerDSN
	c, err := console.Open(context.Background(), cfg, "", nil)
	if err != nil {
		t.Fatalf("open the console: %v", err)
	}
	t.Cleanup(c.Close)
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)

	progress, reviews := batchFromDB(t, f.app.Store, f.batchID)
	if len(reviews) != 3 {
		t.Fatalf("the batch has %d reviews, want 3", len(reviews))
	}
	var hostileReview *dbReview
	reported := 0
	for i := range reviews {
		reported += len(reviews[i].Reported)
		for _, fd := range reviews[i].Reported {
			if fd.File == hostileName {
				hostileReview = &reviews[i]
			}
		}
	}
	if hostileReview == nil || reported < 3 {
		t.Fatalf("the fleet did not report the scripted findings (hostile one among them): %+v", reviews)
	}

	pages := []string{"/", "/reviews", "/reviews/" + reviews[0].ID, "/reviews/" + reviews[0].ID + "/report.md",
		"/reviews/" + reviews[0].ID + "/report.json", "/reviews/" + reviews[0].ID + "/report.sarif",
		"/batches", "/batches/" + f.batchID, "/batches/" + f.batchID + "/events", "/fleet", "/repos?repo=" + reviews[0].Repo,
		"/search?q=lock", "/queues/", "/queues/api/queues"}
	t.Run("refused without signing in", func(t *testing.T) {
		for _, p := range pages {
			for _, hdr := range []string{"", "Bearer wrong-token-0123456789", "Bearer "} {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+p, nil)
				if hdr != "" {
					req.Header.Set("Authorization", hdr)
				}
				req.AddCookie(&http.Cookie{Name: "reviewfleet_console", Value: "forged.value"})
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("GET %s with %q: %d, want 401", p, hdr, resp.StatusCode)
				}
			}
		}
	})

	b := newBrowser(t)
	shots := screenshotDir(t)
	b.do(t, "open the console unauthenticated",
		chromedp.Navigate(srv.URL+"/batches/"+f.batchID), chromedp.WaitVisible(chromedp.CSS("#token")))
	title := get(t, b, "title", chromedp.Title())
	if body := b.text(t, "body"); !strings.Contains(title, "Sign in") || strings.Contains(body, reviews[0].ID) {
		t.Fatalf("an unauthenticated browser saw %q:\n%s", title, body)
	}
	b.screenshot(t, shots, "sign-in")
	b.do(t, "sign in",
		chromedp.SendKeys(chromedp.CSS("#token"), testToken),
		chromedp.Submit(chromedp.CSS("#token")),
		chromedp.WaitVisible(chromedp.CSS("table.entries")))

	t.Run("batch page", func(t *testing.T) {
		// Every review of the batch with its status, and the numbers the
		// database has.
		for _, r := range reviews {
			if status := b.text(t, `tr[data-review="`+r.ID+`"] .status`); strings.TrimSpace(status) != r.Status {
				t.Errorf("review %s shows status %q, the database has %q", r.ID, status, r.Status)
			}
		}
		want := map[string]int{"reviews": progress.Reviews, "done": progress.Done, "failed": progress.Failed,
			"queued": progress.Queued, "running": progress.Running, "ended": progress.Done + progress.Failed}
		for name, n := range want {
			if got := b.text(t, `[data-live="`+name+`"]`); strings.TrimSpace(got) != strconv.Itoa(n) {
				t.Errorf("progress %s shows %q, the database has %d", name, got, n)
			}
		}
		// The live script replaces the numbers with those of the event
		// stream: they must still be the database's.
		b.do(t, "live update", chromedp.WaitReady(chromedp.CSS("body[data-live-updated]")))
		if updated := b.text(t, `[data-live="done"]`); strings.TrimSpace(updated) != strconv.Itoa(progress.Done) {
			t.Errorf("after a live update the page shows %q done, the database has %d", updated, progress.Done)
		}
		b.screenshot(t, shots, "batch")
	})

	t.Run("review pages", func(t *testing.T) {
		for _, r := range reviews {
			// Follow the batch page's link to the review.
			b.do(t, "follow the link to "+r.ID,
				chromedp.Navigate(srv.URL+"/batches/"+f.batchID),
				chromedp.Click(chromedp.CSS(`tr[data-review="`+r.ID+`"] a[href^="/reviews/"]`)),
				chromedp.WaitVisible(chromedp.CSS("#review-id")))
			if url := get(t, b, "location", chromedp.Location()); !strings.HasSuffix(url, "/reviews/"+r.ID) {
				t.Fatalf("the link led to %s, want the review's page", url)
			}
			shown := get(t, b, "findings shown", chromedp.Evaluate[int](`document.querySelectorAll('article.finding').length`))
			if shown < len(r.Reported) {
				t.Errorf("review %s shows %d findings, its report has %d", r.ID, shown, len(r.Reported))
			}
			for _, fd := range r.Reported {
				sel := fmt.Sprintf(`article[data-finding="%d"]`, fd.ID)
				place := b.text(t, sel+" .place")
				stages := get(t, b, "trail", chromedp.Evaluate[[]string](fmt.Sprintf(
					`Array.from(document.querySelectorAll('%s .trail li[data-stage]')).map(e => e.dataset.stage)`, sel)))
				if want := fmt.Sprintf("%s:%d", fd.File, fd.Line); !strings.HasPrefix(strings.TrimSpace(place), want) {
					t.Errorf("finding %d shows %q, want %s", fd.ID, place, want)
				}
				if strings.Join(stages, ",") != strings.Join(fd.Stages, ",") || len(stages) == 0 {
					t.Errorf("finding %d shows the trail %v, the database has %v", fd.ID, stages, fd.Stages)
				}
			}
			if r.ID == hostileReview.ID {
				b.screenshot(t, shots, "review")
			}
		}
	})

	t.Run("injected markup stays text", func(t *testing.T) {
		b.do(t, "the hostile review", chromedp.Navigate(srv.URL+"/reviews/"+hostileReview.ID), chromedp.WaitVisible(chromedp.CSS("#review-id")))
		text := b.text(t, "main")
		if n := get(t, b, "injected elements", chromedp.Evaluate[int](`document.querySelectorAll('main img, main script').length`)); n != 0 {
			t.Errorf("the page holds %d img/script elements from the repository or the model", n)
		}
		for _, s := range []string{hostileName, "<script>alert(2)</script>"} {
			if !strings.Contains(text, s) {
				t.Errorf("the page does not show %q as text", s)
			}
		}
		if os.Getenv("CONSOLE_SCREENSHOTS") != "" {
			png := get(t, b, "screenshot of the hostile finding", chromedp.Screenshot(chromedp.CSS("article.finding")))
			if err := os.WriteFile(filepath.Join(shots, "finding.png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		b.do(t, "search for the hostile file",
			chromedp.Navigate(srv.URL+"/search?in=file&q=%3Cimg"), chromedp.WaitVisible(chromedp.CSS("table.hits")))
		if text := b.text(t, "table.hits"); !strings.Contains(text, hostileName) {
			t.Errorf("the search does not show the hostile file name as text: %q", text)
		}
		b.noDialogs(t)
	})

	t.Run("other pages", func(t *testing.T) {
		b.do(t, "home", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.reviews")))
		text := b.text(t, "main")
		for _, r := range reviews {
			if !strings.Contains(text, r.ID[:12]) {
				t.Errorf("the home page does not link review %s", r.ID)
			}
		}
		b.screenshot(t, shots, "home")
		b.do(t, "fleet", chromedp.Navigate(srv.URL+"/fleet"), chromedp.WaitVisible(chromedp.CSS("table.workers")))
		if text := b.text(t, "main"); !strings.Contains(text, "Reviews per minute") || strings.Contains(text, "No live worker") {
			t.Errorf("the fleet page does not show the live worker:\n%s", text)
		}
		b.screenshot(t, shots, "fleet")
		b.do(t, "repository", chromedp.Navigate(srv.URL+"/batches/"+f.batchID),
			chromedp.Click(chromedp.CSS("table.repos a")), chromedp.WaitVisible(chromedp.CSS("section.charts")))
		if text := b.text(t, "main"); !strings.Contains(text, "Findings by risk type") {
			t.Errorf("the repository page has no chart:\n%s", text)
		}
		b.screenshot(t, shots, "repository")
		b.do(t, "search", chromedp.Navigate(srv.URL+"/search?in=text&q=lock"), chromedp.WaitVisible(chromedp.CSS("table.hits")))
		if text := b.text(t, "table.hits"); !strings.Contains(text, "store.go") {
			t.Errorf("searching for \"lock\" did not find the finding in store.go: %q", text)
		}
		b.screenshot(t, shots, "search")
		// The queue monitor runs its own application under the same
		// session; its shell fills #root only when its scripts ran.
		b.do(t, "queue monitor", chromedp.Navigate(srv.URL+"/queues/"))
		if n := get(t, b, "queue monitor renders", chromedp.Poll[int](`document.querySelector('#root') && document.querySelector('#root').children.length`,
			chromedp.WithPollingTimeout(20*time.Second))); n == 0 {
			t.Error("the queue monitor did not render")
		}
		b.screenshot(t, shots, "queues")
		b.noDialogs(t)
	})
}
