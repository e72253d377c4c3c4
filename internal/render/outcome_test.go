package render

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFailedItemsComeFirstInEveryFormat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, status, error string
		items               []FailedItem
		headline            string
		incomplete          bool
		successful          bool
		notifications       int
	}{
		{name: "clean", status: "done", headline: "", successful: true},
		{name: "incomplete", status: "done", items: []FailedItem{{Stage: "intent", ItemKey: "a.go", Error: "invalid LLM reply: not JSON"}},
			headline: "> **INCOMPLETE:** 1 item could not be reviewed", incomplete: true, notifications: 1},
		{name: "failed", status: "failed", error: "no intent item could be reviewed: 2 of 2 failed (first: 401)",
			items:    []FailedItem{{Stage: "intent", ItemKey: "a.go", Error: "401"}, {Stage: "intent", ItemKey: "b.go", Error: "401"}},
			headline: "> **FAILED:** no intent item could be reviewed", notifications: 3},
	} {
		r := sampleReport()
		r.Status, r.Error, r.FailedItems = tc.status, tc.error, tc.items
		md := Markdown(r)
		top, _, _ := strings.Cut(md, "- **Status:**")
		if tc.headline != "" && !strings.Contains(top, tc.headline) {
			t.Errorf("%s: Markdown does not open with %q:\n%s", tc.name, tc.headline, top)
		}
		if tc.headline == "" && strings.Contains(top, "> **") {
			t.Errorf("%s: unexpected headline:\n%s", tc.name, top)
		}
		js, err := JSON(r)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Incomplete bool `json:"incomplete"`
			Count      int  `json:"failed_item_count"`
		}
		if err := json.Unmarshal(js, &doc); err != nil || doc.Incomplete != tc.incomplete || doc.Count != len(tc.items) {
			t.Errorf("%s: JSON %+v %v", tc.name, doc, err)
		}
		sarif, err := SARIF(r)
		if err != nil {
			t.Fatal(err)
		}
		var log struct {
			Runs []struct {
				Invocations []struct {
					ExecutionSuccessful bool  `json:"executionSuccessful"`
					Notifications       []any `json:"toolExecutionNotifications"`
				} `json:"invocations"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(sarif, &log); err != nil || len(log.Runs[0].Invocations) != 1 {
			t.Fatalf("%s: SARIF %v\n%s", tc.name, err, sarif)
		}
		inv := log.Runs[0].Invocations[0]
		if inv.ExecutionSuccessful != tc.successful || len(inv.Notifications) != tc.notifications {
			t.Errorf("%s: SARIF invocation %+v", tc.name, inv)
		}
	}
}

// A review that failed on its deadline with findings half judged: every
// format puts the reason first, lists what never finished and the stages
// never reached, and says of each finding where it stopped; none of them
// reads as a finished review's tally.
func TestDeadlineFailureSaysWhatDidNotRun(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	if len(r.Findings) == 0 {
		t.Fatal("the sample has no finding to mark")
	}
	r.Status, r.Error = StatusFailed, "review did not finish within 1m30s (stage expert)"
	r.StoppedAt, r.StagesNotRun = "expert", []string{"eval", "report"}
	r.NotRun = []FailedItem{{Stage: "expert", ItemKey: "f1", Error: "snapshot cache not writable: mkdir /c: read-only file system"}}
	for i := range r.Findings {
		r.Findings[i].Expert = nil
		r.Findings[i].StoppedAt, r.Findings[i].MissedStages = "verify", []string{"expert", "eval"}
	}
	md := Markdown(r)
	top, _, _ := strings.Cut(md, "- **Status:**")
	for _, want := range []string{"> **FAILED:** review did not finish", "during the expert stage", "snapshot cache not writable", "stages never reached: eval, report"} {
		if !strings.Contains(top, want) {
			t.Errorf("Markdown's opening lacks %q:\n%s", want, top)
		}
	}
	if strings.Contains(md, " reported, ") {
		t.Errorf("a failed review's summary reads as a finished tally:\n%s", md)
	}
	if strings.Contains(md, "every item completed") || !strings.Contains(md, "### Items not finished") {
		t.Errorf("the Not reviewed section reads as a complete review:\n%s", md)
	}
	if !strings.Contains(md, "**Stopped at:** verify — expert, eval did not judge it") {
		t.Errorf("findings do not say where they stopped:\n%s", md)
	}
	js, err := JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		NotRunCount  int      `json:"not_run_count"`
		StagesNotRun []string `json:"stages_not_run"`
		NotRun       []struct {
			Error string `json:"error"`
		} `json:"not_run"`
		Findings []struct {
			StoppedAt    string   `json:"stopped_at"`
			StagesNotRun []string `json:"stages_not_run"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.NotRunCount != 1 || len(doc.StagesNotRun) != 2 || !strings.Contains(doc.NotRun[0].Error, "not writable") {
		t.Errorf("JSON: %+v", doc)
	}
	for _, f := range doc.Findings {
		if f.StoppedAt != "verify" || strings.Join(f.StagesNotRun, ",") != "expert,eval" {
			t.Errorf("JSON finding: %+v", f)
		}
	}
	back, err := DecodeJSON(js)
	if err != nil || back.Findings[0].StoppedAt != "verify" || back.NotRun[0].Error == "" {
		t.Errorf("decoded: %+v %v", back.Findings[0], err)
	}
	sarif, err := SARIF(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"review failed: review did not finish", "expert item f1 did not finish: snapshot cache not writable", "stages never reached: eval, report", `"stoppedAt": "verify"`} {
		if !strings.Contains(string(sarif), want) {
			t.Errorf("SARIF lacks %q", want)
		}
	}
}
