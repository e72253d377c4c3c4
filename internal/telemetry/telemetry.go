// Package telemetry installs the OpenTelemetry tracer provider and the W3C
// trace-context propagator that carries traces across task hops, and picks
// the span exporter from the standard OTEL_* environment.
package telemetry

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/reviewfleet/reviewfleet/internal/config"
)

// Exporter names the span exporter Setup installs for cfg and the
// environment: OTEL_TRACES_EXPORTER (otlp, console, none) wins; without
// it, telemetry.exporter decides ("stdout" is an alias of "console").
func Exporter(cfg config.Telemetry, getenv func(string) string) string {
	name := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	if name == "" {
		name = cfg.Exporter
	}
	switch name {
	case "", "none":
		return "none"
	case "stdout":
		return "console"
	}
	return name
}

// Setup installs a tracer provider for cfg and returns its shutdown, which
// flushes the spans not yet exported. The exporter is chosen by Exporter:
// "console" writes spans as JSON to w (stderr for the commands, so that
// spans never mix with a report on stdout); "otlp" and any other name
// autoexport knows are configured by the OTEL_EXPORTER_OTLP_* variables;
// with "none" spans are still created (so trace IDs propagate through task
// headers) but not exported. OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
// override telemetry.service_name.
func Setup(ctx context.Context, cfg config.Telemetry, w io.Writer) (func(), error) {
	name := cfg.ServiceName
	if name == "" {
		name = "reviewfleet"
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", name)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("describe the telemetry resource: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	exp, err := newExporter(ctx, Exporter(cfg, os.Getenv), w)
	if err != nil {
		return nil, err
	}
	if exp != nil {
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

// newExporter builds the named exporter (nil for "none").
func newExporter(ctx context.Context, name string, w io.Writer) (sdktrace.SpanExporter, error) {
	switch name {
	case "none":
		return nil, nil
	case "console":
		exp, err := stdouttrace.New(stdouttrace.WithWriter(w))
		if err != nil {
			return nil, fmt.Errorf("build console trace exporter: %w", err)
		}
		return exp, nil
	}
	// "otlp" (or another name autoexport knows) from OTEL_TRACES_EXPORTER,
	// or "otlp" from telemetry.exporter, which is autoexport's default
	// when the variable is unset.
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, fmt.Errorf("build %s trace exporter: %w", name, err)
	}
	if autoexport.IsNoneSpanExporter(exp) {
		return nil, nil
	}
	return exp, nil
}
