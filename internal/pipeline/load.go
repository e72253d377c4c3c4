package pipeline

import (
	"context"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// FindingTask is what a per-finding stage works on: the review, the
// settings it was submitted with, and the finding its item names.
type FindingTask struct {
	Review  review.Review
	Config  config.Config
	Finding review.Finding
}

// LoadFinding loads the finding of a per-finding task; the review and its
// settings come from the job. A key that names no finding, or a finding
// that no longer exists, is a permanent failure; any other error is
// retried.
func LoadFinding(ctx context.Context, st *store.Store, j Job) (FindingTask, error) {
	id, err := ParseFindingKey(j.Payload.Item)
	if err != nil {
		return FindingTask{}, Permanent(err)
	}
	f, err := st.GetFinding(ctx, id)
	if err != nil {
		return FindingTask{}, PermanentIfMissing(err)
	}
	return FindingTask{Review: j.Review, Config: j.Config, Finding: f}, nil
}
