package submit

import (
	"sort"

	"github.com/reviewfleet/reviewfleet/internal/redact"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// ReasonSecretName is the skip reason of a file whose path holds a secret
// (keys/ghp_….txt). The file is stored and reported under its redacted
// path and is not reviewed: no stage could find it in the snapshot under
// that name, and the snapshot leaves it out (internal/snapshot), so the
// raw name is kept nowhere. A finding can still name the redacted path.
const ReasonSecretName = "secret_in_name"

// redactReview replaces the secrets in everything a review stores and
// shows a model — file contents, diffs, the purpose (commit messages, a
// pull request's title and body), file paths and the refs — with markers
// numbered over the whole review, so one value has one marker everywhere.
// Contents come first, in path order, so that a snapshot redacting the
// same files in the same order (internal/snapshot) numbers them the same.
// It returns how many secrets were replaced.
func redactReview(nr *review.NewReview) int {
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
	for i := range nr.Files {
		f := &nr.Files[i]
		p, old := r.Text(f.Path), r.Text(f.OldPath)
		if p == f.Path && old == f.OldPath {
			continue
		}
		f.Path, f.OldPath = p, old
		// The diff's headers name the file too.
		f.Content, f.Diff = nil, ""
		if f.SkipReason == "" {
			f.SkipReason = ReasonSecretName
		}
	}
	nr.BaseRef, nr.HeadRef = r.Text(nr.BaseRef), r.Text(nr.HeadRef)
	return r.Found()
}
