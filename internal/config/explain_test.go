package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// YAML mistakes name the key and the kind of value wanted, never a Go type.
func TestYAMLErrorsNameKeyAndKind(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "c.yaml")
	doc := "llm:\n  timeout: soon\n  chunk: 1\nharness:\n  eval_enabled: maybe\n  confidence_overrides: [1]\nintent:\n  max_file_bytes: lots\n  ignore: 3\n"
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := load(p, env(nil))
	if err == nil {
		t.Fatal("bad config accepted")
	}
	msg := err.Error()
	for _, want := range []string{
		`line 2: llm.timeout: want a duration like 30s or 5m, got "soon"`,
		`line 3: unknown key llm.chunk`,
		`line 5: harness.eval_enabled: want true or false, got "maybe"`,
		`line 6: harness.confidence_overrides: want a section of name: value lines, each value a number, got a list`,
		`line 8: intent.max_file_bytes: want a whole number, got "lots"`,
		`line 9: intent.ignore: want a list, each item text, got "3"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	for _, goName := range []string{"time.Duration", "float64", "[]string", "config.", "!!"} {
		if strings.Contains(msg, goName) {
			t.Errorf("error shows Go or YAML internals %q:\n%s", goName, msg)
		}
	}
}

func TestMisspeltEnvironmentVariablesWarn(t *testing.T) {
	t.Parallel()
	w := EnvWarnings([]string{
		"REVIEWFLEET_HARNESS_EVAL_ENABLD=false", "REVIEWFLEET_LLM_MODEL=x", "REVIEWFLEET_CONFIG=c.yaml",
		"PATH=/bin", "REVIEWFLEET_COMPLETELY_UNRELATED_THING=1",
	})
	if len(w) != 2 {
		t.Fatalf("warnings: %q", w)
	}
	if !strings.Contains(w[0], "REVIEWFLEET_HARNESS_EVAL_ENABLD") || !strings.Contains(w[0], "did you mean REVIEWFLEET_HARNESS_EVAL_ENABLED?") {
		t.Errorf("warning: %q", w[0])
	}
	if strings.Contains(w[1], "did you mean") {
		t.Errorf("far-off name got a suggestion: %q", w[1])
	}
}
