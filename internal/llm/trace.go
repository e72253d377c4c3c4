package llm

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// startSpan opens the span of one call when a tracer is configured.
func (c *Client) startSpan(ctx context.Context, meta Meta) (context.Context, trace.Span) {
	if c.tracer == nil {
		return ctx, nil
	}
	return c.tracer.Start(ctx, "llm.chat",
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("reviewfleet.review_id", meta.ReviewID),
			attribute.String("reviewfleet.stage", meta.Stage),
			attribute.String("reviewfleet.item_key", meta.ItemKey),
			attribute.String("gen_ai.request.model", meta.Model),
		))
}

// endSpan adds the call's usage and outcome to span and ends it.
func (c *Client) endSpan(span trace.Span, stats callStats, err error) {
	if span == nil {
		return
	}
	span.SetAttributes(
		attribute.Int("gen_ai.usage.input_tokens", stats.tokensIn),
		attribute.Int("gen_ai.usage.output_tokens", stats.tokensOut),
		attribute.Int("reviewfleet.llm.attempts", stats.attempts),
	)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
