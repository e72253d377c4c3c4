package submit_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/stagetest"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if largeRepoDir != "" {
		_ = os.RemoveAll(largeRepoDir)
	}
	testenv.Shutdown()
	os.Exit(code)
}

// benchFiles is the size of the change BenchmarkSubmitLargeChange submits.
const benchFiles = 20_000

var (
	largeRepoOnce sync.Once
	largeRepoDir  string
	largeRepoErr  error
)

// largeRepo builds, once per process, a repository whose head commit adds
// benchFiles small files in 200 directories.
func largeRepo(b *testing.B) string {
	largeRepoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "reviewfleet-bench-")
		if err != nil {
			largeRepoErr = err
			return
		}
		largeRepoDir = dir
		git := func(args ...string) error {
			cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("git %v: %v %s", args, err, out)
			}
			return nil
		}
		steps := []func() error{
			func() error { return git("init", "-q") },
			func() error { return os.WriteFile(filepath.Join(dir, "README"), []byte("bench\n"), 0o644) },
			func() error { return git("add", "-A") },
			func() error { return git("commit", "-q", "-m", "base") },
			func() error {
				for i := range benchFiles {
					p := filepath.Join(dir, fmt.Sprintf("pkg%03d", i%200), fmt.Sprintf("file %05d.go", i))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						return err
					}
					body := fmt.Sprintf("package p\n\n// F%d returns its number.\nfunc F%d() int { return %d }\n", i, i, i)
					if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
						return err
					}
				}
				return nil
			},
			func() error { return git("add", "-A") },
			func() error { return git("commit", "-q", "-m", "add many files") },
		}
		for _, s := range steps {
			if largeRepoErr = s(); largeRepoErr != nil {
				return
			}
		}
	})
	if largeRepoErr != nil {
		b.Fatal(largeRepoErr)
	}
	return largeRepoDir
}

// BenchmarkSubmitLargeChange prepares and stores a change of 20,000 added
// files: reading the diff and every head blob, then inserting the review,
// its files and its intent items. Run it with
//
//	go test ./internal/submit -run '^$' -bench SubmitLargeChange -benchtime 1x
func BenchmarkSubmitLargeChange(b *testing.B) {
	dir := largeRepo(b)
	st := stagetest.Store(b)
	cfg := config.Default()
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		nr, err := submit.Prepare(ctx, cfg, submit.Request{Origin: submit.FromOperator, Repo: dir, Base: "HEAD~1", Head: "HEAD"})
		if err != nil {
			b.Fatal(err)
		}
		if len(nr.Files) != benchFiles {
			b.Fatalf("prepared %d files, want %d", len(nr.Files), benchFiles)
		}
		if _, err := st.CreateReview(ctx, nr); err != nil {
			b.Fatal(err)
		}
	}
}
