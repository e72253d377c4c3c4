package app

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/pipeline"
)

// startLocalFleet makes this process the fleet when the app runs on an
// in-process Redis: a worker and a reconciler (scoped to review id, or to
// every review when id is empty), both driving reviews through p, run
// until the returned stop is called (safe to call more than once; it waits
// for both). A worker that cannot run is reported to fail (when not nil).
// With a real fleet it starts nothing and stop does nothing.
func (a *App) startLocalFleet(ctx context.Context, id string, p *pipeline.Pipeline, fail func(error)) (stop func(), err error) {
	if !a.LocalRedis {
		return func() {}, nil
	}
	wcfg := a.Cfg.Worker
	wcfg.HealthAddr = ""
	// When the command ends early, in-flight tasks get a moment, not the
	// fleet's full grace period: nothing will pick them up again.
	wcfg.ShutdownTimeout = 2 * time.Second
	w, err := a.newWorker(wcfg, p)
	if err != nil {
		return nil, err
	}
	rec := a.Reconciler()
	rec.Pipeline, rec.Only = p, id
	fleetCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := w.Run(fleetCtx); err != nil && fail != nil {
			fail(fmt.Errorf("in-process worker: %w", err))
		}
	}()
	go func() { defer wg.Done(); _ = rec.Run(fleetCtx, time.Second) }()
	var once sync.Once
	return func() { once.Do(func() { cancel(); wg.Wait() }) }, nil
}

// abandonLocalReview fails review id, whose wait ended early while this
// process was its only fleet: nothing else will ever run its queued tasks.
// The in-process fleet is stopped first, so no task in flight writes after
// the failure is recorded. It reports whether the failure was recorded
// (the review may have ended meanwhile).
func (a *App) abandonLocalReview(ctx context.Context, id, reason string, stopFleet func()) bool {
	stopFleet()
	bg := context.WithoutCancel(ctx)
	if _, err := a.Store.FailReview(bg, id, reason); err != nil {
		return false
	}
	a.StoreFailureReport(bg, id)
	return true
}
