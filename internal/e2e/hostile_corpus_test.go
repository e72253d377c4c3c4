package e2e

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/hostile"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/progress"
	"github.com/reviewfleet/reviewfleet/store"
)

// TestHostileCorpusThroughTheFleet submits every case of testdata/hostile to
// a fleet (real Postgres and Redis, a fake model answering from the schemas)
// and checks the outcome its case.json expects: a clear error at submission,
// or a review that ends done with the files skipped and reviewed as listed.
// No case may crash, hang or leave a review running.
func TestHostileCorpusThroughTheFleet(t *testing.T) {
	t.Parallel()
	cases, err := hostile.Load(hostile.Root())
	if err != nil {
		t.Fatal(err)
	}
	f := newFleet(t, nil, nil)
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
			if r.Status != store.StatusDone {
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
			if _, err := f.sub.Store.GetReport(ctx, id); err != nil {
				t.Errorf("%s: no report stored: %v", c.About, err)
			}
		})
	}
}
