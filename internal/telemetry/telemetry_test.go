package telemetry

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"

	"github.com/reviewfleet/reviewfleet/internal/childtrace"
	"github.com/reviewfleet/reviewfleet/internal/config"
)

// OTEL_TRACES_EXPORTER wins over telemetry.exporter; "stdout" is an alias
// of "console"; nothing set means no export.
func TestExporterPrecedence(t *testing.T) {
	cases := []struct{ env, cfg, want string }{
		{"", "", "none"},
		{"", "none", "none"},
		{"", "stdout", "console"},
		{"", "console", "console"},
		{"", "otlp", "otlp"},
		{"console", "none", "console"},
		{"none", "stdout", "none"},
		{"otlp", "stdout", "otlp"},
	}
	for _, c := range cases {
		env := func(k string) string {
			if k == "OTEL_TRACES_EXPORTER" {
				return c.env
			}
			return ""
		}
		if got := Exporter(config.Telemetry{Exporter: c.cfg}, env); got != c.want {
			t.Errorf("OTEL_TRACES_EXPORTER=%q exporter=%q: got %q, want %q", c.env, c.cfg, got, c.want)
		}
	}
}

// The console exporter writes the spans to the writer it was given
// (stderr for the commands), and ChildOnly records nothing outside a trace.
func TestConsoleExporterAndChildOnly(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	var buf bytes.Buffer
	shutdown, err := Setup(context.Background(), config.Telemetry{ServiceName: "test-svc"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, root := otel.Tracer("t").Start(context.Background(), "root-span")
	_, child := childtrace.ChildOnly().Tracer("c").Start(ctx, "child-span")
	child.End()
	root.End()
	_, orphan := childtrace.ChildOnly().Tracer("c").Start(context.Background(), "orphan-span")
	if orphan.IsRecording() {
		t.Error("a client span outside any trace is recorded")
	}
	orphan.End()
	shutdown()
	out := buf.String()
	for _, want := range []string{"root-span", "child-span", "test-svc"} {
		if !strings.Contains(out, want) {
			t.Errorf("console output lacks %q", want)
		}
	}
	if strings.Contains(out, "orphan-span") {
		t.Error("console output holds the orphan span")
	}
}
