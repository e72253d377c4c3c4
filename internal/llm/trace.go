package llm

import (
	"context"
	"errors"
	"strconv"

	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/reviewfleet/reviewfleet/internal/metrics"
)

// startSpan opens the span of one model call (all its attempts), named and
// described by the OpenTelemetry GenAI semantic conventions: "chat MODEL",
// gen_ai.operation.name and gen_ai.request.model. Each HTTP attempt is a
// child span of it (otelhttp).
func (c *Client) startSpan(ctx context.Context, r *request) (context.Context, trace.Span) {
	if c.tracer == nil {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", "openai"),
		attribute.String("gen_ai.request.model", r.meta.Model),
		attribute.String("reviewfleet.review_id", r.meta.ReviewID),
		attribute.String("reviewfleet.stage", r.meta.Stage),
		attribute.String("reviewfleet.item_key", r.meta.ItemKey),
	}
	//lint:ignore SA1019 max_tokens is what most OpenAI-compatible servers accept; reasoning models get max_completion_tokens
	legacy := r.req.MaxTokens
	if n := max(r.req.MaxCompletionTokens, legacy); n > 0 {
		attrs = append(attrs, attribute.Int("gen_ai.request.max_tokens", n))
	}
	if r.req.Temperature != 0 {
		attrs = append(attrs, attribute.Float64("gen_ai.request.temperature", float64(r.req.Temperature)))
	}
	return c.tracer.Start(ctx, "chat "+r.meta.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// endSpan adds the call's reply, usage and outcome to span and ends it.
func (c *Client) endSpan(span trace.Span, resp openai.ChatCompletionResponse, stats callStats, err error) {
	if span == nil {
		return
	}
	span.SetAttributes(
		attribute.Int("gen_ai.usage.input_tokens", stats.tokensIn),
		attribute.Int("gen_ai.usage.output_tokens", stats.tokensOut),
		attribute.Int("reviewfleet.llm.attempts", stats.attempts),
	)
	if resp.Model != "" {
		span.SetAttributes(attribute.String("gen_ai.response.model", resp.Model))
	}
	if resp.ID != "" {
		span.SetAttributes(attribute.String("gen_ai.response.id", resp.ID))
	}
	if len(resp.Choices) > 0 {
		reasons := make([]string, 0, len(resp.Choices))
		for _, ch := range resp.Choices {
			reasons = append(reasons, string(ch.FinishReason))
		}
		span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", reasons))
	}
	if err != nil {
		span.SetAttributes(attribute.String("error.type", errorType(err, stats.status)))
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// errorType is the low-cardinality error.type of a failed call: the HTTP
// status of the endpoint's last answer, or what kept the call from one.
func errorType(err error, status int) string {
	var invalid *InvalidReplyError
	var cool *CoolDownError
	switch {
	case errors.Is(err, ErrBudgetExceeded):
		return "budget_exceeded"
	case errors.As(err, &invalid):
		return "invalid_reply"
	case status > 0:
		return strconv.Itoa(status)
	case errors.As(err, &cool):
		return "cool_down"
	case errors.Is(err, ErrInvalidRequest):
		return "invalid_request"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "_OTHER"
}

// observe counts one attempt in the fleet's metrics.
func observe(rec CallRecord, status string) {
	metrics.LLMCalls.WithLabelValues(rec.Stage, rec.Model, status).Inc()
	if status == StatusRateLimited {
		metrics.LLMRateLimited.WithLabelValues(rec.Stage, rec.Model).Inc()
	}
	if rec.TokensIn > 0 {
		metrics.LLMTokens.WithLabelValues(rec.Stage, rec.Model, "input").Add(float64(rec.TokensIn))
	}
	if rec.TokensOut > 0 {
		metrics.LLMTokens.WithLabelValues(rec.Stage, rec.Model, "output").Add(float64(rec.TokensOut))
	}
}
