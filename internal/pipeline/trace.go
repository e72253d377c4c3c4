package pipeline

import (
	"context"
	"encoding/json"

	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// traceField is the key of the review's trace context in the configuration
// snapshot stored with it (reviews.config). It is not a setting: config
// decoding ignores it, and so does the dedupe key.
const traceField = "trace_context"

// tracerName names the pipeline's producer and consumer spans.
const tracerName = "reviewfleet/pipeline"

// WithTraceContext returns snapshot (a JSON object) with ctx's trace
// context added, so that every task of the review, also one enqueued again
// by the reconciler long after, joins the trace its submission started.
// Without a span in ctx snapshot is returned unchanged.
func WithTraceContext(ctx context.Context, snapshot json.RawMessage) json.RawMessage {
	carrier := propagation.MapCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, carrier)
	if len(carrier) == 0 {
		return snapshot
	}
	obj := map[string]json.RawMessage{}
	if len(snapshot) > 0 {
		if err := json.Unmarshal(snapshot, &obj); err != nil {
			return snapshot
		}
	}
	b, err := json.Marshal(map[string]string(carrier))
	if err != nil {
		return snapshot
	}
	obj[traceField] = b
	out, err := json.Marshal(obj)
	if err != nil {
		return snapshot
	}
	return out
}

// ReviewTrace returns ctx carrying the trace context stored with r (ctx
// unchanged when none was stored).
func ReviewTrace(ctx context.Context, r review.Review) context.Context {
	var snap struct {
		Trace map[string]string `json:"trace_context"`
	}
	if len(r.Config) == 0 || json.Unmarshal(r.Config, &snap) != nil || len(snap.Trace) == 0 {
		return ctx
	}
	return otel.GetTextMapPropagator().Extract(ctx, propagation.MapCarrier(snap.Trace))
}

// producerParent picks the parent of the span that enqueues a task of
// review r: the caller's span when it belongs to the review's trace (the
// submission, or the task that finished the previous stage); otherwise
// (the reconciler, an admission by another review's task) the review's
// stored trace context, linked to the caller's span.
func producerParent(ctx context.Context, r review.Review) (context.Context, []trace.Link) {
	cur := trace.SpanContextFromContext(ctx)
	rctx := ReviewTrace(context.WithoutCancel(ctx), r)
	stored := trace.SpanContextFromContext(rctx)
	if !stored.IsValid() || (cur.IsValid() && cur.TraceID() == stored.TraceID()) {
		return ctx, nil
	}
	var links []trace.Link
	if cur.IsValid() {
		links = append(links, trace.Link{SpanContext: cur, Attributes: []attribute.KeyValue{attribute.String("reviewfleet.link", "enqueued_by")}})
	}
	// Keep ctx's deadline and values, with the review's span as parent.
	return trace.ContextWithRemoteSpanContext(ctx, stored), links
}

// startProducer opens the span of one enqueue; its context goes into the
// task's headers.
func startProducer(ctx context.Context, r review.Review, p Payload) (context.Context, trace.Span) {
	parent, links := producerParent(ctx, r)
	queue := QueueFor(p.Stage, p.Bulk)
	return otel.Tracer(tracerName).Start(parent, "send "+queue,
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithLinks(links...),
		trace.WithAttributes(
			attribute.String("messaging.system", "asynq"),
			attribute.String("messaging.operation.type", "send"),
			attribute.String("messaging.destination.name", queue),
			attribute.String("messaging.message.id", GenTaskID(p.ReviewID, p.Stage, p.Item, p.Gen)),
			attribute.String("reviewfleet.review_id", p.ReviewID),
			attribute.String("reviewfleet.stage", string(p.Stage)),
		))
}

// TaskTrace returns the context a task's consumer span starts from: the
// producer's span from the task's headers, or, for a task without them
// (enqueued by an older version), the trace stored with its review. The
// second result is the producer's span context, to link to.
func (p *Pipeline) TaskTrace(ctx context.Context, t *asynq.Task) (context.Context, trace.SpanContext) {
	hctx := ExtractTrace(ctx, t)
	if sc := trace.SpanContextFromContext(hctx); sc.IsValid() {
		return hctx, sc
	}
	if len(otel.GetTextMapPropagator().Fields()) == 0 {
		// This process propagates no trace context, so it joins no trace:
		// the review's stored one would be read for nothing.
		return ctx, trace.SpanContext{}
	}
	pl, err := DecodePayload(t)
	if err != nil || p.Store == nil {
		return ctx, trace.SpanContext{}
	}
	r, err := p.Store.GetReview(ctx, pl.ReviewID)
	if err != nil {
		return ctx, trace.SpanContext{}
	}
	rctx := ReviewTrace(ctx, r)
	return rctx, trace.SpanContextFromContext(rctx)
}
