package submit

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the spans of submissions.
const tracerName = "reviewfleet/submit"

// StartSpan opens the root span of one review's submission: it covers the
// preparation (clone, diff, snapshot) and the first enqueue, and every
// task of the review, in any process, joins it.
func StartSpan(ctx context.Context) (context.Context, trace.Span) {
	return otel.Tracer(tracerName).Start(ctx, "review submit", trace.WithSpanKind(trace.SpanKindProducer))
}

// StartBatchSpan opens the root span of one review of a batch: a trace of
// its own, linked to the span of the batch's submission (if any).
func StartBatchSpan(ctx context.Context, batchID string) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.String("reviewfleet.batch_id", batchID))}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	return otel.Tracer(tracerName).Start(ctx, "review submit", opts...)
}

// EndSpan ends a submission's span with the review it created, or the
// error that kept it from being created.
func EndSpan(span trace.Span, id string, err error) {
	if id != "" {
		span.SetAttributes(attribute.String("reviewfleet.review_id", id))
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
