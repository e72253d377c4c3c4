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
