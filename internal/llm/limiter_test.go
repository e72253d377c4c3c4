package llm

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a manual clock: timers fire only when Advance passes them.
type fakeClock struct {
	mu       sync.Mutex
	now      time.Time
	timers   []*fakeTimer
	requests []time.Duration // every duration a timer was asked for
}

type fakeTimer struct {
	at      time.Time
	ch      chan time.Time
	stopped bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), ch: make(chan time.Time, 1)}
	c.timers = append(c.timers, t)
	c.requests = append(c.requests, d)
	return t.ch, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		t.stopped = true
		return true
	}
}

// Advance moves the clock and fires the timers now due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.stopped && !t.at.After(c.now) {
			t.ch <- c.now
			continue
		}
		if !t.stopped {
			kept = append(kept, t)
		}
	}
	c.timers = kept
}

// waitTimers blocks until n timers are pending.
func (c *fakeClock) waitTimers(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		pending := 0
		for _, tm := range c.timers {
			if !tm.stopped {
				pending++
			}
		}
		c.mu.Unlock()
		if pending >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("timed out waiting for %d pending timers", n)
}

func (c *fakeClock) lastRequest() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.requests) == 0 {
		return 0
	}
	return c.requests[len(c.requests)-1]
}

// waitAsync runs l.Wait in a goroutine and reports its result on a channel.
func waitAsync(ctx context.Context, l Limiter, tokens int) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- l.Wait(ctx, tokens) }()
	return ch
}

func expectBlocked(t *testing.T, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("Wait returned %v while it should block", err)
	case <-time.After(20 * time.Millisecond):
	}
}

func expectDone(t *testing.T, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return")
	}
}

func TestLocalLimiterRequestsFIFO(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLocalLimiter(2, 0, time.Minute, clk)
	ctx := context.Background()
	for i := range 2 {
		if err := l.Wait(ctx, 0); err != nil {
			t.Fatalf("burst wait %d: %v", i, err)
		}
	}
	if len(clk.requests) != 0 {
		t.Fatalf("burst waits slept: %v", clk.requests)
	}
	first := waitAsync(ctx, l, 0)
	clk.waitTimers(t, 1)
	second := waitAsync(ctx, l, 0)
	clk.waitTimers(t, 2)

	clk.Advance(29 * time.Second)
	expectBlocked(t, first)
	clk.Advance(time.Second) // 30s: one request per 30s at 2 rpm
	expectDone(t, first)
	expectBlocked(t, second)
	clk.Advance(30 * time.Second)
	expectDone(t, second)
}

func TestLocalLimiterTokens(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLocalLimiter(0, 100, time.Minute, clk)
	ctx := context.Background()
	if err := l.Wait(ctx, 60); err != nil {
		t.Fatal(err)
	}
	ch := waitAsync(ctx, l, 60)
	clk.waitTimers(t, 1)
	// 20 tokens short at 100 tokens per minute: 12 seconds.
	if got := clk.lastRequest(); got != 12*time.Second {
		t.Errorf("waited for %v, want 12s", got)
	}
	clk.Advance(12 * time.Second)
	expectDone(t, ch)

	// A request above the per-minute quota can never pass: it fails.
	if err := l.Wait(ctx, 1_000); !errors.Is(err, ErrOverQuota) || !IsPermanent(err) {
		t.Errorf("oversized request = %v, want a permanent ErrOverQuota", err)
	}
}

func TestLocalLimiterSmallBurst(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLocalLimiter(120, 0, 2*time.Second, clk) // 2/s, a burst of 4
	ctx := context.Background()
	for i := range 4 {
		if err := l.Wait(ctx, 0); err != nil {
			t.Fatalf("burst wait %d: %v", i, err)
		}
	}
	if len(clk.requests) != 0 {
		t.Fatalf("burst waits slept: %v", clk.requests)
	}
	ch := waitAsync(ctx, l, 0)
	clk.waitTimers(t, 1)
	if got := clk.lastRequest(); got != 500*time.Millisecond {
		t.Errorf("fifth request waits %v, want one interval of 500ms", got)
	}
	clk.Advance(500 * time.Millisecond)
	expectDone(t, ch)
}

func TestLocalLimiterCorrectChargesExtraTokens(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLocalLimiter(0, 100, time.Minute, clk)
	ctx := context.Background()
	if err := l.Wait(ctx, 10); err != nil {
		t.Fatal(err)
	}
	l.Correct(10, 70) // the reply used 60 more than estimated
	ch := waitAsync(ctx, l, 40)
	clk.waitTimers(t, 1)
	// 30 left, 10 short at 100/min: 6s.
	if got := clk.lastRequest(); got != 6*time.Second {
		t.Errorf("waited for %v, want 6s", got)
	}
	clk.Advance(6 * time.Second)
	expectDone(t, ch)
}

func TestLocalLimiterCancelRefunds(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLocalLimiter(1, 0, time.Minute, clk)
	if err := l.Wait(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := waitAsync(ctx, l, 0)
	clk.waitTimers(t, 1)
	cancel()
	if err := <-ch; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Wait = %v", err)
	}
	// The abandoned reservation was returned: the next caller waits one
	// interval, not two.
	next := waitAsync(context.Background(), l, 0)
	clk.waitTimers(t, 1)
	if got := clk.lastRequest(); got != time.Minute {
		t.Errorf("next caller waits %v, want 1m", got)
	}
	clk.Advance(time.Minute)
	expectDone(t, next)

	done, stop := context.WithCancel(context.Background())
	stop()
	if err := l.Wait(done, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait on a done context = %v", err)
	}
}

func TestLocalLimiterPenalize(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLocalLimiter(0, 0, time.Minute, clk)
	ctx := context.Background()
	if err := l.Wait(ctx, 1_000_000); err != nil {
		t.Fatal(err)
	}
	if len(clk.requests) != 0 {
		t.Fatal("unlimited limiter slept")
	}
	l.Penalize(5 * time.Second)
	ch := waitAsync(ctx, l, 1)
	clk.waitTimers(t, 1)
	clk.Advance(4 * time.Second)
	expectBlocked(t, ch)
	clk.Advance(time.Second)
	expectDone(t, ch)
	l.Penalize(-time.Second) // ignored
	if err := l.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

func TestLocalLimiterPenalizeExtendsWaiters(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLocalLimiter(60, 0, time.Minute, clk) // one per second after the burst
	ctx := context.Background()
	for range 60 {
		if err := l.Wait(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	ch := waitAsync(ctx, l, 0)
	clk.waitTimers(t, 1)
	l.Penalize(10 * time.Second)
	clk.Advance(time.Second) // the original slot: the penalty holds it back
	clk.waitTimers(t, 1)
	expectBlocked(t, ch)
	clk.Advance(9 * time.Second)
	expectDone(t, ch)
}

func TestLocalLimiterConcurrentCounts(t *testing.T) {
	t.Parallel()
	l := NewLocalLimiterBurst(10, 0, time.Minute) // real clock: a burst of 10, then one per 6s
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var ok, limited atomic.Int32
	var wg sync.WaitGroup
	for range 25 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Wait(ctx, 0); err == nil {
				ok.Add(1)
			} else if errors.Is(err, context.DeadlineExceeded) {
				limited.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 10 || limited.Load() != 15 {
		t.Errorf("admitted %d, timed out %d; want 10 and 15", ok.Load(), limited.Load())
	}
}

// countingLimiter counts calls and can fail Wait.
type countingLimiter struct {
	waits, penalties atomic.Int32
	err              error
}

func (c *countingLimiter) Wait(context.Context, int) error { c.waits.Add(1); return c.err }
func (c *countingLimiter) Penalize(time.Duration)          { c.penalties.Add(1) }

func TestCombine(t *testing.T) {
	t.Parallel()
	a, b := &countingLimiter{}, &countingLimiter{}
	l := Combine(a, nil, b)
	if err := l.Wait(context.Background(), 5); err != nil {
		t.Fatal(err)
	}
	l.Penalize(time.Second)
	if a.waits.Load() != 1 || b.waits.Load() != 1 || a.penalties.Load() != 1 || b.penalties.Load() != 1 {
		t.Errorf("a=%d/%d b=%d/%d", a.waits.Load(), a.penalties.Load(), b.waits.Load(), b.penalties.Load())
	}
	failing := &countingLimiter{err: errors.New("redis down")}
	c := &countingLimiter{}
	if err := Combine(failing, c).Wait(context.Background(), 1); err == nil || c.waits.Load() != 0 {
		t.Errorf("err = %v, later waits = %d; want the first error to stop", err, c.waits.Load())
	}
	if err := Combine().Wait(context.Background(), 1); err != nil {
		t.Errorf("empty Combine: %v", err)
	}
}
