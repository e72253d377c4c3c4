package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

func TestStageToggles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		edit    func(*config.Config)
		skipped review.Stage
	}{
		{"verify off", func(c *config.Config) { c.Harness.VerifyEnabled = false }, review.StageVerify},
		{"eval off", func(c *config.Config) { c.Harness.EvalEnabled = false }, review.StageEval},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFleet(t, demo.Handler, c.edit)
			r := f.review(t, demoRepo(t))
			if r.Status != review.ReviewDone {
				t.Fatalf("status %s: %s", r.Status, r.Error)
			}
			if len(r.SkippedStages) != 1 || r.SkippedStages[0] != string(c.skipped) {
				t.Fatalf("skipped stages %v, want [%s]", r.SkippedStages, c.skipped)
			}
			byStage := verdictsByStage(t, f.sub.Store, r.ID)
			if len(byStage[c.skipped]) != 0 {
				t.Errorf("%d %s verdict rows with the stage disabled", len(byStage[c.skipped]), c.skipped)
			}
			for _, st := range []review.Stage{review.StageVerify, review.StageExpert, review.StageEval} {
				if st != c.skipped && len(byStage[st]) == 0 {
					t.Errorf("no %s verdict rows", st)
				}
			}
			items, err := f.sub.Store.ListItems(context.Background(), r.ID, c.skipped)
			if err != nil || len(items) != 0 {
				t.Errorf("ledger has %d %s items with the stage disabled (%v)", len(items), c.skipped, err)
			}
			rep, _ := f.sub.Store.GetReport(context.Background(), r.ID)
			if !strings.Contains(strings.ToLower(rep.Markdown), "skipped") {
				t.Errorf("the report does not say the stage was skipped")
			}
		})
	}
}

// The SARIF report is valid 2.1.0 and every location points at a line that
// exists in the head version of its file.
func TestSARIFLocationsExistInHead(t *testing.T) {
	t.Parallel()
	f := newFleet(t, demo.Handler, nil)
	req := demoRepo(t)
	r := f.review(t, req)
	rep, err := f.sub.Store.GetReport(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string `json:"version"`
		Schema  string `json:"$schema"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int `json:"startLine"`
							EndLine   int `json:"endLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(rep.SARIF, &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || !strings.Contains(log.Schema, "sarif") || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name == "" {
		t.Fatalf("not a SARIF 2.1.0 log: %s", rep.SARIF)
	}
	rules := map[string]bool{}
	for _, ru := range log.Runs[0].Tool.Driver.Rules {
		rules[ru.ID] = true
	}
	if len(log.Runs[0].Results) == 0 {
		t.Fatal("no results")
	}
	for _, res := range log.Runs[0].Results {
		if !rules[res.RuleID] {
			t.Errorf("result rule %q has no rule", res.RuleID)
		}
		if _, err := review.ParseRiskType(res.RuleID); err != nil {
			t.Errorf("ruleId %q is not a risk type", res.RuleID)
		}
		if res.Level != "error" && res.Level != "warning" && res.Level != "note" {
			t.Errorf("level %q", res.Level)
		}
		loc := res.Locations[0].PhysicalLocation
		data, err := os.ReadFile(filepath.Join(req.Repo, filepath.FromSlash(loc.ArtifactLocation.URI)))
		if err != nil {
			t.Fatalf("location %s: %v", loc.ArtifactLocation.URI, err)
		}
		lines := strings.Count(string(data), "\n")
		if loc.Region.StartLine < 1 || loc.Region.EndLine < loc.Region.StartLine || loc.Region.EndLine > lines {
			t.Errorf("%s lines %d-%d outside a %d-line file", loc.ArtifactLocation.URI, loc.Region.StartLine, loc.Region.EndLine, lines)
		}
	}
}
