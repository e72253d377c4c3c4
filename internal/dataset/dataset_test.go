package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeCase(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadDatasetReadsCases(t *testing.T) {
	dir := t.TempDir()
	writeCase(t, dir, "x.patch", "diff --git a/a b/a\n")
	writeCase(t, dir, "b.json", `{"name": "b", "diff": "x.patch", "purpose": "p",
		"golden": [{"file": "a.go", "line": 4, "text": "one line", "risk_type": "Concurrency"},
		           {"text": "imported, text only", "severity": "high"}]}`)
	writeCase(t, dir, "a.json", `{"name": "a", "repo": "../repo", "base": "main", "head": "feature", "purpose": "p",
		"golden": [{"file": "a.go", "start_line": 2, "end_line": 5, "text": "range"}]}`)
	writeCase(t, dir, "notes.txt", "not a case")
	cases, err := LoadDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[0].Name != "a" || cases[1].Name != "b" {
		t.Fatalf("cases %+v", cases)
	}
	if g := cases[1].Golden[0]; g.StartLine != 4 || g.EndLine != 4 || g.Line != 0 || g.RiskType != "concurrency" {
		t.Errorf("line not expanded: %+v", g)
	}
	if cases[1].DiffPath() != filepath.Join(dir, "x.patch") {
		t.Errorf("diff path %s", cases[1].DiffPath())
	}
	if cases[0].RepoPath() != filepath.Join(filepath.Dir(dir), "repo") {
		t.Errorf("repo path %s", cases[0].RepoPath())
	}
}

func TestLoadDatasetErrorsNameTheFile(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"name": "a", "diff": "x.patch", "purpose": "p", "golden": [], "extra": 1}`, `unknown field "extra"`},
		{`{"name": "a", "diff": "x.patch", "purpose": "p", "golden": [{"file": "a", "line": 1, "text": "t", "sev": "x"}]}`, `unknown field "sev"`},
		{`{"diff": "x.patch", "purpose": "p", "golden": []}`, `missing "name"`},
		{`{"name": "a", "diff": "x.patch", "golden": []}`, `missing "purpose"`},
		{`{"name": "a", "diff": "x.patch", "purpose": "p"}`, `missing "golden"`},
		{`{"name": "a", "repo": ".", "base": "m", "purpose": "p", "golden": []}`, `missing "base" and "head"`},
		{`{"name": "a", "diff": "x.patch", "base": "m", "head": "n", "purpose": "p", "golden": []}`, `"diff" replaces`},
		{`{"name": "a", "diff": "x.patch", "purpose": "p", "golden": [{"file": "a", "line": 1}]}`, `golden[0]: missing "text"`},
		{`{"name": "a", "diff": "x.patch", "purpose": "p", "golden": [{"file": "a", "text": "t"}]}`, `missing "start_line"`},
		{`{"name": "a", "diff": "x.patch", "purpose": "p", "golden": [{"file": "a", "start_line": 3, "text": "t"}]}`, `missing "end_line"`},
		{`{"name": "a", "diff": "x.patch", "purpose": "p", "golden": [{"file": "a", "start_line": 3, "end_line": 2, "text": "t"}]}`, `before "start_line"`},
		{`{"name": "a", "diff": "x.patch", "purpose": "p", "golden": [{"start_line": 3, "end_line": 3, "text": "t"}]}`, `lines without "file"`},
		{`{"name": "a", "diff": "x.patch", "purpose": "p", "golden": [{"file": "a", "line": 1, "text": "t", "snippet": "a\nb"}]}`, `"snippet" is one line`},
		{`{"name": "a", "diff": "x.patch", "purpose": "p", "golden": [{"file": "a", "line": 1, "text": "t", "related": [{"symbol": "f"}]}]}`, `related[0]`},
		{`{"name": "a", "diff": "missing.patch", "purpose": "p", "golden": []}`, `diff:`},
		{`{"name": "a", "diff": "x.patch", "purpose": "p", "golden": []} {}`, `data after`},
		{`{"name": "a", "diff": "x.patch", "purpose": "p", "golden": [`, `decode case`},
	} {
		dir := t.TempDir()
		writeCase(t, dir, "x.patch", "diff --git a/a b/a\n")
		writeCase(t, dir, "ok.json", `{"name": "ok", "diff": "x.patch", "purpose": "p", "golden": []}`)
		bad := writeCase(t, dir, "bad.json", tc.body)
		_, err := LoadDataset(dir)
		if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error naming %s and saying %q", tc.body, err, bad, tc.want)
		}
	}
}

func TestLoadDatasetRejectsDuplicateNamesAndEmptyDirs(t *testing.T) {
	dir := t.TempDir()
	writeCase(t, dir, "x.patch", "diff\n")
	writeCase(t, dir, "a.json", `{"name": "same", "diff": "x.patch", "purpose": "p", "golden": []}`)
	writeCase(t, dir, "b.json", `{"name": "same", "diff": "x.patch", "purpose": "p", "golden": []}`)
	if _, err := LoadDataset(dir); err == nil || !strings.Contains(err.Error(), "b.json") {
		t.Errorf("duplicate names: %v", err)
	}
	if _, err := LoadDataset(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no case") {
		t.Errorf("empty dataset: %v", err)
	}
}

// The sample dataset shipped in testdata/eval must stay loadable.
func TestSampleDatasetLoads(t *testing.T) {
	cases, err := LoadDataset(filepath.Join("..", "..", "testdata", "eval"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no sample cases")
	}
}

// A label that is not a reviewfleet risk type is kept as given and noted;
// a known one is spelled canonically.
func TestAnyLabelIsKeptAndNoted(t *testing.T) {
	c, err := DecodeCase([]byte(`{"name": "a", "diff": "x.patch", "purpose": "p", "golden": [
		{"file": "a.go", "line": 1, "text": "t", "risk_type": " Security "},
		{"file": "a.go", "line": 9, "text": "u", "risk_type": "CONCURRENCY", "snippet": "go f()", "related": [{"symbol": "f", "snippet": "m[k] = v"}]},
		{"text": "v", "risk_type": "data-loss"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if g := c.Golden; g[0].RiskType != "Security" || g[1].RiskType != "concurrency" || g[2].RiskType != "data-loss" {
		t.Fatalf("labels %q %q %q", g[0].RiskType, g[1].RiskType, g[2].RiskType)
	}
	if !c.Golden[0].Foreign() || c.Golden[1].Foreign() || c.Golden[1].Related[0].Symbol != "f" {
		t.Errorf("foreign or related wrong: %+v", c.Golden)
	}
}
