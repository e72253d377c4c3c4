package llmfake

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Calls held open together show up as that many in flight: the peak, and
// busy time spent at that level.
func TestServerCountsCallsInFlight(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	arrived := make(chan struct{}, 4)
	srv := New(func(ctx context.Context, req openai.ChatCompletionRequest) Reply {
		arrived <- struct{}{}
		<-release
		return Text("ok")
	})
	defer srv.Close()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(srv.URL+"/chat/completions", "application/json",
				strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}()
	}
	for range 4 {
		<-arrived
	}
	before := srv.Concurrency()
	time.Sleep(20 * time.Millisecond) // time at the level of four, to be measured
	close(release)
	wg.Wait()
	c := srv.Concurrency()
	if c.Peak != 4 {
		t.Fatalf("peak %d calls in flight, want 4", c.Peak)
	}
	if d := c.Since(before).At[4]; d < 20*time.Millisecond {
		t.Errorf("%s at four calls in flight, want at least the 20ms they were held", d)
	}
	if s := c.ShareAtLeast(5); s != 0 {
		t.Errorf("share of time at five or more: %f", s)
	}
	if m := c.Mean(); m <= 1 || m > 4 {
		t.Errorf("mean in flight %f, want between 1 and 4", m)
	}
}
