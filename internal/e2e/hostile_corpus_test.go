package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/hostile"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// TestHostileCorpusThroughTheFleet submits every case of testdata/hostile to
// a fleet (real Postgres and Redis, a fake model reporting marked lines)
// and checks the outcome its case.json expects: a clear error at submission,
// or a review that ends done with the files skipped and reviewed as listed
// and a finding reported at each location listed.
// No case may crash, hang or leave a review running.
func TestHostileCorpusThroughTheFleet(t *testing.T) {
	t.Parallel()
	cases, err := hostile.Load(hostile.Root())
	if err != nil {
		t.Fatal(err)
	}
	// The markers reviewer reports the "BUG:" lines of the cases, so that
	// odd paths and line endings go through every stage and the report.
	f := newFleet(t, llmfake.Markers(""), nil)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			req, err := c.Materialize(ctx, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			id, err := f.sub.Submit(ctx, req)
			if err := c.CheckError(err); err != nil {
				t.Fatalf("%s: %v", c.About, err)
			}
			if err != nil {
				return
			}
			r, err := progress.Wait(ctx, f.sub.Store, id, io.Discard, 0)
			if err != nil {
				t.Fatalf("%s: review %s is stuck in %s at stage %s: %v", c.About, id, r.Status, r.Stage, err)
			}
			if r.Status != review.ReviewDone {
				t.Fatalf("%s: review %s ended %s: %s", c.About, id, r.Status, r.Error)
			}
			files, err := f.sub.Store.ListFiles(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.CheckFiles(files); err != nil {
				t.Fatalf("%s: %v", c.About, err)
			}
			for _, stage := range pipeline.TaskStages {
				items, err := f.sub.Store.ListItems(ctx, id, stage)
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range items {
					if it.Status != "done" {
						t.Errorf("%s: %s item %s is %s: %s", c.About, stage, it.Key, it.Status, it.Error)
					}
				}
			}
			rep, err := f.sub.Store.GetReport(ctx, id)
			if err != nil {
				t.Fatalf("%s: no report stored: %v", c.About, err)
			}
			reported, err := reportedLocations(rep.JSON)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range c.Findings {
				if !slices.Contains(reported, want) {
					t.Errorf("%s: no finding at %s in the report; reported: %q", c.About, want, reported)
				}
			}
		})
	}
}

// reportedLocations lists the "file:line" of every finding of a JSON report.
func reportedLocations(report []byte) ([]string, error) {
	var doc struct {
		Findings []struct {
			File      string `json:"file"`
			LineStart int    `json:"line_start"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(report, &doc); err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	var out []string
	for _, f := range doc.Findings {
		out = append(out, fmt.Sprintf("%s:%d", f.File, f.LineStart))
	}
	return out, nil
}
