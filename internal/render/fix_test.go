package render

import (
	"encoding/json"
	"strings"
	"testing"
)

// Issue 11, "Prompts": a finding's proposed fix reaches SARIF as a fix
// (one replacement per hunk) and the Markdown as a diff block; the quoted
// code and the fix travel in the JSON.
func TestFixInSARIFMarkdownAndJSON(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	r.Findings[0].Quote = "\t\trefunds[id] = r"
	r.Findings[0].Fix = "@@ -40,3 +40,5 @@\n \tgo func() {\n+\t\tmu.Lock()\n+\t\tdefer mu.Unlock()\n \t\trefunds[id] = r\n \t}()\n"
	data, err := SARIF(r)
	if err != nil {
		t.Fatal(err)
	}
	var log sarifLog
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	fixes := log.Runs[0].Results[0].Fixes
	if len(fixes) != 1 || len(fixes[0].ArtifactChanges) != 1 {
		t.Fatalf("fixes = %+v", fixes)
	}
	rep := fixes[0].ArtifactChanges[0].Replacements
	if len(rep) != 1 || rep[0].DeletedRegion.StartLine != 40 || rep[0].DeletedRegion.EndLine != 42 ||
		!strings.Contains(rep[0].InsertedContent.Text, "mu.Lock()") {
		t.Errorf("replacements = %+v", rep)
	}
	md := Markdown(r)
	if !strings.Contains(md, "**Suggested fix:**\n\n```diff\n@@ -40,3 +40,5 @@") {
		t.Errorf("markdown lacks the suggested fix block:\n%s", md)
	}
	js, err := JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"fix": "@@ -40,3`) || !strings.Contains(string(js), `"quote": "\t\trefunds[id] = r"`) {
		t.Errorf("json lacks quote and fix:\n%s", js)
	}
	if f := log.Runs[0].Results; len(f) > 1 && f[1].Fixes != nil {
		t.Errorf("a finding without a fix got fixes %+v", f[1].Fixes)
	}
}
