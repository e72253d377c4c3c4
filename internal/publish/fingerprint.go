package publish

import (
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Fingerprint is a finding's stable identity across pushes (see
// render.Fingerprint). Posting keys inline comments by it so a finding
// already commented on is not commented on again.
func Fingerprint(f review.Finding) string { return render.Fingerprint(f) }
