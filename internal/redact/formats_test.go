package redact

import (
	"strings"
	"sync"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/redact/secrettest"
)

// TestFormats redacts every sample of the corpus: none of its secrets
// survives, markers stand in their place, and the line count is kept.
func TestFormats(t *testing.T) {
	samples := secrettest.Samples()
	if len(samples) < 60 {
		t.Fatalf("corpus has %d formats, want at least 60", len(samples))
	}
	for _, s := range samples {
		t.Run(s.Name, func(t *testing.T) {
			if len(s.Secrets) == 0 {
				t.Fatal("sample lists no secret")
			}
			out := redactFile(New(), s.File, s.Text)
			for _, v := range s.Secrets {
				if strings.Contains(out, v) {
					t.Errorf("secret %q survived:\n%s", v, out)
				}
			}
			if !strings.Contains(out, markerPrefix) {
				t.Errorf("no marker in:\n%s", out)
			}
			if got, want := strings.Count(out, "\n"), strings.Count(s.Text, "\n"); got != want {
				t.Errorf("%d lines after redaction, %d before", got, want)
			}
		})
	}
}

// TestFormatsConcurrent redacts the corpus from several goroutines at
// once: the scanner and the line caches are shared.
func TestFormatsConcurrent(t *testing.T) {
	samples := secrettest.Samples()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := New()
			for _, s := range samples {
				out := redactFile(r, s.File, s.Text)
				for _, v := range s.Secrets {
					if strings.Contains(out, v) {
						t.Errorf("%s: secret %q survived", s.Name, v)
					}
				}
			}
		}()
	}
	wg.Wait()
}
