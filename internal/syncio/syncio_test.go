package syncio_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/syncio"
)

// Lines written from many goroutines arrive whole; run with -race.
func TestConcurrentWritesStayWhole(t *testing.T) {
	var buf syncio.Buffer
	w := &syncio.Writer{W: &buf}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = w.Write([]byte(strings.Repeat(string(rune('a'+i%26)), 100) + "\n"))
			_ = buf.String()
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 50 {
		t.Fatalf("%d lines, want 50", len(lines))
	}
	for _, l := range lines {
		if len(l) != 100 || strings.Count(l, l[:1]) != 100 {
			t.Errorf("a line was interleaved: %q", l)
		}
	}
}
