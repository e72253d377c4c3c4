package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

func putFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadOverrideReplacesFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "packs", "robustness.txt"), "# Pattern pack: robustness (house rules)\r\nCheck every lookup.\r\n\r\n")
	putFile(t, filepath.Join(dir, "verify.txt"), "Verify the finding.\n")
	s, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	def := mustLoad(t)
	got := s.IntentSystem([]Pack{PackRobustness})
	if !strings.Contains(got, "# Pattern pack: robustness (house rules)\nCheck every lookup.\n") {
		t.Errorf("override text missing or not normalised:\n%s", got[len(got)-200:])
	}
	if strings.Contains(got, packText(t, def, PackRobustness)) {
		t.Error("embedded robustness pack still present")
	}
	if s.VerifySystem(0.3) != "Verify the finding." {
		t.Errorf("VerifySystem = %q", s.VerifySystem(0.3))
	}
	if s.EvalSystem() != def.EvalSystem() {
		t.Error("a file without override changed")
	}
	if s.IntentSystemFull() == def.IntentSystemFull() {
		t.Error("full prompt does not reflect the override")
	}
}

func TestLoadOverrideErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   map[string]string
		wantErr string
	}{
		{"unknown name", map[string]string{"packs/robustnes.txt": "x"}, "packs/robustnes.txt"},
		{"unknown top-level file", map[string]string{"README.md": "notes"}, "README.md"},
		{"empty file", map[string]string{"eval.txt": " \n"}, "empty file(s) eval.txt"},
		{"schema breaks strict mode", map[string]string{"schemas/verify.json": `{"type":"object","properties":{"anchored":{"type":"boolean"}},"required":["anchored"]}`}, "additionalProperties"},
		{"schema is not json", map[string]string{"schemas/eval.json": `{"type":`}, "schemas/eval.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, text := range tt.files {
				putFile(t, filepath.Join(dir, filepath.FromSlash(name)), text)
			}
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Load error = %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestLoadMissingDir(t *testing.T) {
	t.Parallel()
	if _, err := Load(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Fatal("Load of a missing directory succeeded")
	}
	file := filepath.Join(t.TempDir(), "f.txt")
	putFile(t, file, "x")
	if _, err := Load(file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("Load of a file: %v", err)
	}
}

// A Kubernetes ConfigMap volume holds its files in a timestamped directory
// reached through "..data" and top-level symbolic links.
func TestLoadOverrideConfigMapLayout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stamp := "..2026_01_02_03_04_05.000000001"
	putFile(t, filepath.Join(dir, stamp, "packs", "intent.txt"), "# Pattern pack: intent (team)\n")
	putFile(t, filepath.Join(dir, stamp, "eval.txt"), "Evaluate.\n")
	putFile(t, filepath.Join(dir, ".gitkeep"), "")
	for _, link := range []struct{ name, target string }{
		{"..data", stamp},
		{"packs", filepath.Join("..data", "packs")},
		{"eval.txt", filepath.Join("..data", "eval.txt")},
	} {
		if err := os.Symlink(link.target, filepath.Join(dir, link.name)); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if s.EvalSystem() != "Evaluate." || !strings.Contains(s.IntentSystem([]Pack{PackIntent}), "# Pattern pack: intent (team)") {
		t.Error("ConfigMap files were not applied")
	}
}

func TestNamesCoverEveryPart(t *testing.T) {
	t.Parallel()
	s := mustLoad(t)
	names := s.Names()
	want := []string{fileIntentCore, fileIntentChunked, fileVerify, fileExpert, fileEval}
	for _, p := range AllPacks {
		want = append(want, packFile(p))
	}
	for _, r := range review.RiskTypes {
		want = append(want, focusFile(r))
	}
	for _, r := range References {
		want = append(want, referenceFile(r))
	}
	for _, st := range SchemaStages {
		want = append(want, schemaFile(st))
	}
	for _, w := range want {
		text, ok := s.File(w)
		if !ok || strings.TrimSpace(text) == "" {
			t.Errorf("embedded file %s missing or empty", w)
		}
	}
	if len(names) != len(want) {
		t.Errorf("Names has %d files, want %d: %v", len(names), len(want), names)
	}
}
