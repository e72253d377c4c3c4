package submit

import (
	"sort"

	"github.com/reviewfleet/reviewfleet/internal/redact"
	"github.com/reviewfleet/reviewfleet/store"
)

// redactReview replaces the secrets in everything a review stores and
// shows a model — file contents, diffs and the purpose — with markers
// numbered over the whole review, so one value has one marker everywhere.
// Contents come first, in path order, so that a snapshot redacting the
// same files in the same order (internal/snapshot) numbers them the same.
// It returns how many secrets were replaced.
func redactReview(nr *store.NewReview) int {
	r := redact.New()
	order := make([]int, len(nr.Files))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return nr.Files[order[a]].Path < nr.Files[order[b]].Path })
	for _, i := range order {
		if c := nr.Files[i].Content; c != nil {
			s := r.Text(*c)
			nr.Files[i].Content = &s
		}
	}
	for _, i := range order {
		nr.Files[i].Diff = r.Diff(nr.Files[i].Diff)
	}
	nr.Purpose = r.Text(nr.Purpose)
	return r.Found()
}
