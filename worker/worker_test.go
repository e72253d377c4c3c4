package worker_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"go.uber.org/goleak"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/localenv"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/worker"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// A worker serves health checks while it runs and leaves no goroutine
// behind once its context is cancelled.
func TestWorkerRunsAndShutsDownCleanly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	addr, stop, err := localenv.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	noop := pipeline.WorkFunc(func(context.Context, pipeline.Job) error { return nil })
	handlers := worker.Handlers{}
	for _, st := range pipeline.TaskStages {
		handlers[st] = noop
	}
	cfg := config.Default().Worker
	cfg.HealthAddr = freeAddr(t)
	cfg.ShutdownTimeout = time.Second
	healthy := make(chan struct{}, 1)
	w, err := worker.New(asynq.RedisClientOpt{Addr: addr}, cfg, &pipeline.Pipeline{}, handlers,
		func(context.Context) error { healthy <- struct{}{}; return nil },
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()

	var resp *http.Response
	for i := 0; i < 100; i++ {
		resp, err = http.Get("http://" + cfg.HealthAddr + "/readyz")
		if err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz: %v %v", resp, err)
	}
	resp.Body.Close()
	<-healthy
	http.DefaultClient.CloseIdleConnections()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("worker did not stop")
	}
}

func TestMissingHandlerIsAnError(t *testing.T) {
	_, err := worker.New(asynq.RedisClientOpt{Addr: "127.0.0.1:1"}, config.Default().Worker, &pipeline.Pipeline{},
		worker.Handlers{review.StageIntent: pipeline.WorkFunc(func(context.Context, pipeline.Job) error { return nil })}, nil, nil)
	if err == nil {
		t.Fatal("a worker without every stage's handler was built")
	}
}
