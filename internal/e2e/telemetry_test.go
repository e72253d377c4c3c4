package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// TestOneTracePerReview runs a review through the real queues, a worker in
// its own app (as in its own process) and the fake LLM, with spans in
// memory: the submission, every task, every model call and the Postgres,
// Redis and HTTP spans made on the review's behalf share one trace. Then
// the worker's /metrics serves the queue and token metrics of that review.
// Not parallel: it installs the global tracer provider.
func TestOneTracePerReview(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		otel.SetTracerProvider(noop.NewTracerProvider())
	})

	f := openFleet(t, demo.Handler, func(c *config.Config) { c.Worker.HealthAddr = "127.0.0.1:0" })
	w, err := f.worker.NewWorker(f.cfg.Worker)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(wctx) }()
	f.stop = func() { cancel(); <-done }

	ctx, cancelWait := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancelWait()
	waitListening(t, w.HealthAddr)
	// The counters are the process's: other tests' reviews count too.
	before := parseMetrics(scrape(t, "http://"+w.HealthAddr()+"/metrics"))
	id, err := f.sub.Submit(ctx, demoRepo(t))
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	r, err := progress.Wait(ctx, f.sub.Store, id, io.Discard, time.Minute)
	if err != nil || r.Status != review.ReviewDone {
		t.Fatalf("review %s: %v, status %s (%s)", id, err, r.Status, r.Error)
	}
	metricsText := scrape(t, "http://"+w.HealthAddr()+"/metrics")
	f.stop() // the last spans end with the worker's handlers
	f.stop = func() {}

	spans := exp.GetSpans()
	var root *tracetest.SpanStub
	for i, s := range spans {
		if s.Name == "review submit" && attr(s, "reviewfleet.review_id") == id {
			root = &spans[i]
		}
	}
	if root == nil {
		t.Fatalf("no submission span for review %s among %d spans", id, len(spans))
	}
	if root.Parent.IsValid() {
		t.Errorf("the submission span has a parent %s: it must be the root", root.Parent.SpanID())
	}
	tid := root.SpanContext.TraceID()

	traces := map[trace.TraceID]bool{}
	byScope := map[string]int{}
	tasks := map[string]int{}
	var chats int
	for _, s := range spans {
		of := attr(s, "review.id")
		if of == "" {
			of = attr(s, "reviewfleet.review_id")
		}
		if of == id {
			traces[s.SpanContext.TraceID()] = true
		}
		if s.SpanContext.TraceID() != tid {
			continue
		}
		byScope[s.InstrumentationScope.Name]++
		switch {
		case s.SpanKind == trace.SpanKindConsumer:
			tasks[s.Name]++
			if len(s.Links) == 0 || !s.Parent.IsValid() || s.Links[0].SpanContext.SpanID() != s.Parent.SpanID() {
				t.Errorf("task span %s is not a child of, and linked to, its producer (parent %v, links %v)", s.Name, s.Parent.SpanID(), s.Links)
			}
		case strings.HasPrefix(s.Name, "chat "):
			chats++
			for _, k := range []string{"gen_ai.operation.name", "gen_ai.request.model", "gen_ai.response.model",
				"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.response.finish_reasons"} {
				if attr(s, k) == "" {
					t.Errorf("model call span %s lacks %s", s.Name, k)
				}
			}
			if attr(s, "gen_ai.operation.name") != "chat" || s.Name != "chat "+attr(s, "gen_ai.request.model") {
				t.Errorf("model call span %q: operation %q, model %q", s.Name, attr(s, "gen_ai.operation.name"), attr(s, "gen_ai.request.model"))
			}
		}
	}
	if len(traces) != 1 || !traces[tid] {
		t.Errorf("the review's spans are in %d traces, want 1 (%s)", len(traces), tid)
	}
	for _, typ := range []string{"review:intent", "review:verify", "review:expert", "review:eval", "review:report"} {
		if tasks[typ] == 0 {
			t.Errorf("no %s task span in the review's trace (task spans: %v)", typ, tasks)
		}
	}
	if chats == 0 {
		t.Error("no model call span in the review's trace")
	}
	for _, scope := range []string{
		"github.com/exaring/otelpgx",
		"github.com/redis/go-redis/extra/redisotel",
		"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp",
		"reviewfleet/pipeline",
		"reviewfleet/agent", // the expert's tool calls
	} {
		if byScope[scope] == 0 {
			t.Errorf("no span of %s in the review's trace (scopes: %v)", scope, byScope)
		}
	}
	t.Logf("review %s: %d spans in its trace, %d task spans, %d model calls; by scope %v", id, sum(byScope), sum(tasks), chats, byScope)

	// The worker's /metrics after the review.
	fam := parseMetrics(metricsText)
	for _, name := range []string{
		"reviewfleet_llm_tokens_total", "reviewfleet_llm_calls_total", "reviewfleet_stage_items_total",
		"reviewfleet_stage_duration_seconds_count", "reviewfleet_task_queue_wait_seconds_count",
		"reviewfleet_reviews_finished_total", "reviewfleet_llm_limiter_wait_seconds_count",
	} {
		if fam[name] <= before[name] {
			t.Errorf("/metrics: %s = %v after the review, %v before: want it to grow", name, fam[name], before[name])
		}
	}
	if fam["asynq_tasks_processed_total"] <= 0 {
		t.Errorf("/metrics: asynq_tasks_processed_total = %v, want > 0", fam["asynq_tasks_processed_total"])
	}
	if _, ok := fam["asynq_queue_size"]; !ok {
		t.Error("/metrics has no asynq_queue_size")
	}
	if strings.Contains(metricsText, id) {
		t.Error("/metrics holds the review ID: labels must stay bounded")
	}

	// The scheduler's /metrics also reads the reviews by status from Postgres.
	srv := httptest.NewServer(f.sub.MetricsHandler(true))
	defer srv.Close()
	if text := scrape(t, srv.URL); !strings.Contains(text, `reviewfleet_reviews{status="done"} 1`) {
		t.Errorf("scheduler /metrics lacks reviewfleet_reviews{status=\"done\"} 1:\n%s", grepLines(text, "reviewfleet_reviews{"))
	}
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// waitListening waits until the worker's probe server is up.
func waitListening(t *testing.T, addr func() string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); addr() == ""; {
		if time.Now().After(deadline) {
			t.Fatal("the worker's probe server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %d %v", url, resp.StatusCode, err)
	}
	return string(body)
}

// parseMetrics sums each metric's samples over their labels, from the
// Prometheus text format.
func parseMetrics(text string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		name := line[:sp]
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name = name[:i]
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		out[name] += v
	}
	return out
}
