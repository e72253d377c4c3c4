package prompts

import (
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/source"
)

// The prompts describe the user messages the stages build from
// internal/diff and internal/source. These tests fail when either rendering
// drifts from what the prompts show the model.

func TestIntentExampleMatchesNumberedDiff(t *testing.T) {
	t.Parallel()
	s := mustLoad(t)
	core, _ := s.File(fileIntentCore)
	var example []string
	for _, l := range strings.Split(core, "\n") {
		if strings.HasPrefix(l, "    ") {
			example = append(example, strings.TrimPrefix(l, "    "))
		}
	}
	if len(example) < 5 {
		t.Fatalf("no diff example found in %s", fileIntentCore)
	}
	// The same hunk as a unified diff.
	unified := "--- a/conf.go\n+++ b/conf.go\n@@ -40,3 +40,6 @@ func Load(path string) (*Config, error)\n" +
		" cfg := &Config{}\n" +
		"-data, _ := os.ReadFile(path)\n" +
		"+data, err := os.ReadFile(path)\n" +
		"+if err != nil {\n" +
		"+    return nil, fmt.Errorf(\"read config: %w\", err)\n" +
		"+}\n" +
		" if err := yaml.Unmarshal(data, cfg); err != nil {\n"
	files, err := diff.Parse([]byte(unified))
	if err != nil || len(files) != 1 {
		t.Fatalf("parse example diff: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(files[0].Numbered(), "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(example, "\n") {
		t.Errorf("prompt example:\n%s\ninternal/diff renders:\n%s", strings.Join(example, "\n"), strings.Join(got, "\n"))
	}
}

func TestNumberedLineFormatMatchesSource(t *testing.T) {
	t.Parallel()
	s := mustLoad(t)
	want := strings.TrimSuffix(source.Format([]source.Line{{No: 41, Text: "code"}}), "\n")
	core, _ := s.File(fileIntentCore)
	for name, text := range map[string]string{"intent_core": core, "verify": s.VerifySystem(0.3), "eval": s.EvalSystem()} {
		if !strings.Contains(text, `"`+strings.Replace(want, "41", "57", 1)+`"`) && !strings.Contains(text, `"`+want+`"`) {
			t.Errorf("%s does not show numbered lines as internal/source renders them (%q)", name, want)
		}
	}
}
