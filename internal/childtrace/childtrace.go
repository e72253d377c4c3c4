// Package childtrace holds a tracer provider for client instrumentation that
// records spans only inside traces a review already started. It depends on
// the OpenTelemetry API alone, so the packages that instrument clients do
// not link the exporters.
package childtrace

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// ChildOnly is a tracer provider for client instrumentation (Postgres,
// Redis, HTTP): it records a span only inside a trace already started —
// a review's submission, a task, a model call. Queries and Redis commands
// made outside any trace (queue polling, heartbeats, progress polls) would
// otherwise each start a trace of their own and bury the reviews' traces.
// It resolves the global provider at each span, so a provider installed
// after the instrumented client was built is used.
func ChildOnly() trace.TracerProvider { return childOnlyProvider{} }

type childOnlyProvider struct{ embedded.TracerProvider }

func (childOnlyProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return childOnlyTracer{name: name, opts: opts}
}

type childOnlyTracer struct {
	embedded.Tracer
	name string
	opts []trace.TracerOption
}

func (t childOnlyTracer) Start(ctx context.Context, spanName string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, trace.SpanFromContext(ctx) // a non-recording span
	}
	return otel.GetTracerProvider().Tracer(t.name, t.opts...).Start(ctx, spanName, opts...)
}
