package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/testenv"
	"github.com/reviewfleet/reviewfleet/store"
)

// Waiting for WithLock's lock may outlast the pool's statement_timeout:
// the holder may be waiting out a rate limit.
func TestWithLockWaitsLongerThanTheStatementTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.OpenWith(ctx, testenv.IsolatedSchema(t), store.PoolOptions{StatementTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- st.WithLock(ctx, "writer", func() error { close(held); <-release; return nil })
	}()
	<-held
	time.AfterFunc(400*time.Millisecond, func() { close(release) })
	ran := false
	if err := st.WithLock(ctx, "writer", func() error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("second holder: ran %v, %v; want it to wait for the lock", ran, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
