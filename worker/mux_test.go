package worker

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

func noopHandlers() Handlers {
	h := Handlers{}
	for _, s := range pipeline.TaskSteps() {
		h[s.Stage] = pipeline.WorkFunc(func(context.Context, pipeline.Job) error { return nil })
	}
	return h
}

func newTestWorker(t *testing.T, h Handlers) (*Worker, error) {
	t.Helper()
	w, err := New(asynq.RedisClientOpt{Addr: "127.0.0.1:1"}, config.Default().Worker, &pipeline.Pipeline{}, h, nil,
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if w != nil {
		t.Cleanup(func() { w.cancelBase(); w.srvRDB.Close() })
	}
	return w, err
}

// The worker's mux routes exactly the table's task types, each to its own
// pattern, and nothing else.
func TestWorkerRoutesExactlyTheTableTaskTypes(t *testing.T) {
	w, err := newTestWorker(t, noopHandlers())
	if err != nil {
		t.Fatal(err)
	}
	var routed []string
	for _, s := range pipeline.Steps {
		typ := s.Type
		if s.Kind != pipeline.KindTask {
			typ = "review:" + string(s.Stage)
		}
		_, pattern := w.mux.Handler(asynq.NewTask(typ, nil))
		switch {
		case s.Kind == pipeline.KindTask && pattern != s.Type:
			t.Errorf("%s: task type %s routed to %q", s.Stage, s.Type, pattern)
		case s.Kind != pipeline.KindTask && pattern != "":
			t.Errorf("%s runs no task, yet %s is routed to %q", s.Stage, typ, pattern)
		}
		if pattern != "" {
			routed = append(routed, pattern)
		}
	}
	for _, typ := range []string{"review:done", "review", "reviewfleet:intent", "schedule:fire"} {
		if _, pattern := w.mux.Handler(asynq.NewTask(typ, nil)); pattern != "" {
			t.Errorf("%s routed to %q", typ, pattern)
		}
	}
	var want []string
	for _, s := range pipeline.TaskSteps() {
		want = append(want, s.Type)
	}
	if !slices.Equal(routed, want) {
		t.Errorf("routed %v, want %v", routed, want)
	}
}

// A handler for a stage that is no task step (a typo, or the manager) is
// refused rather than silently never called.
func TestHandlerForAStageWithoutTaskIsAnError(t *testing.T) {
	for _, st := range []review.Stage{review.StageManager, review.StageDone, "verfiy"} {
		h := noopHandlers()
		h[st] = pipeline.WorkFunc(func(context.Context, pipeline.Job) error { return nil })
		if _, err := newTestWorker(t, h); err == nil {
			t.Errorf("a worker with a handler for %q was built", st)
		}
	}
}
