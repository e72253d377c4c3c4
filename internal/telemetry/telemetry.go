// Package telemetry installs the OpenTelemetry tracer provider and the W3C
// trace-context propagator that carries traces across task hops.
package telemetry

import (
	"context"
	"fmt"
	"io"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/reviewfleet/reviewfleet/internal/config"
)

// Setup installs a tracer provider for cfg and returns its shutdown. With
// exporter "stdout" spans are written to w as JSON; with "none" spans are
// created (so trace IDs propagate through task headers) but not exported.
func Setup(ctx context.Context, cfg config.Telemetry, w io.Writer) (func(), error) {
	name := cfg.ServiceName
	if name == "" {
		name = "reviewfleet"
	}
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", name))),
	}
	if cfg.Exporter == "stdout" {
		exp, err := stdouttrace.New(stdouttrace.WithWriter(w))
		if err != nil {
			return nil, fmt.Errorf("build stdout trace exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(sctx)
	}, nil
}
