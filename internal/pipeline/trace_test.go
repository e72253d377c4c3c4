package pipeline

import (
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// A task enqueued outside the review's trace (by the reconciler, or by
// another review's task admitting this one) joins the review's trace,
// linked to the span that enqueued it; one enqueued inside it stays a
// child of its caller.
func TestProducerJoinsTheReviewsTrace(t *testing.T) {
	otel.SetTextMapPropagator(propagation.TraceContext{})
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr := tp.Tracer("test")

	subCtx, submission := tr.Start(context.Background(), "review submit")
	snap := WithTraceContext(subCtx, json.RawMessage(`{"llm":{"model":"m"}}`))
	submission.End()
	var decoded map[string]json.RawMessage
	if err := json.Unmarshal(snap, &decoded); err != nil || decoded["llm"] == nil || decoded[traceField] == nil {
		t.Fatalf("snapshot %s lost its settings or got no trace context", snap)
	}
	r := review.Review{ID: "r1", Config: snap}
	want := submission.SpanContext().TraceID()

	// The reconciler: a span of another trace.
	recCtx, rec := tr.Start(context.Background(), "reconcile")
	defer rec.End()
	parent, links := producerParent(recCtx, r)
	if got := trace.SpanContextFromContext(parent).TraceID(); got != want {
		t.Errorf("re-enqueued task's trace = %s, want the review's %s", got, want)
	}
	if len(links) != 1 || links[0].SpanContext.SpanID() != rec.SpanContext().SpanID() {
		t.Errorf("links = %v, want one to the reconciler's span", links)
	}

	// No span at all (a plain admission pass).
	if got := trace.SpanContextFromContext(mustParent(t, context.Background(), r)).TraceID(); got != want {
		t.Errorf("task enqueued without a span: trace %s, want %s", got, want)
	}

	// Inside the review's trace: the caller's own span is the parent.
	taskCtx, task := tr.Start(subCtx, "review:intent")
	defer task.End()
	parent, links = producerParent(taskCtx, r)
	if got := trace.SpanContextFromContext(parent).SpanID(); got != task.SpanContext().SpanID() || len(links) != 0 {
		t.Errorf("parent span %s (links %v), want the task's span %s", got, links, task.SpanContext().SpanID())
	}

	// The task built from the producer span carries the trace in its headers.
	pctx, span := startProducer(recCtx, r, Payload{ReviewID: "r1", Stage: review.StageIntent, Item: "a.go"})
	defer span.End()
	tk, err := NewTask(pctx, Payload{ReviewID: "r1", Stage: review.StageIntent, Item: "a.go"})
	if err != nil {
		t.Fatal(err)
	}
	got := trace.SpanContextFromContext(ExtractTrace(context.Background(), tk))
	if got.TraceID() != want || got.SpanID() != span.SpanContext().SpanID() {
		t.Errorf("task headers carry %s/%s, want the producer span %s/%s", got.TraceID(), got.SpanID(), want, span.SpanContext().SpanID())
	}
}

func mustParent(t *testing.T, ctx context.Context, r review.Review) context.Context {
	t.Helper()
	p, _ := producerParent(ctx, r)
	return p
}

// A review stored before trace contexts were kept has none: the caller's
// context is used unchanged.
func TestReviewTraceWithoutStoredContext(t *testing.T) {
	ctx := context.Background()
	if sc := trace.SpanContextFromContext(ReviewTrace(ctx, review.Review{Config: json.RawMessage(`{}`)})); sc.IsValid() {
		t.Errorf("got a span context %v from a snapshot without one", sc)
	}
	if got := WithTraceContext(ctx, json.RawMessage(`{"a":1}`)); string(got) != `{"a":1}` {
		t.Errorf("snapshot changed without a span: %s", got)
	}
}
