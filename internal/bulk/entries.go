package bulk

import (
	"fmt"

	"github.com/reviewfleet/reviewfleet/store"
)

// EntrySummary says what became of a batch's entries, in the words every
// command uses for them: "X new reviews, Y linked to identical reviews,
// Z could not be submitted" and, while the batch is being submitted, how
// many are still to submit. A linked entry shares an
// identical review (of this batch or an earlier one) instead of being
// reviewed again.
func EntrySummary(c store.EntryCounts) string {
	s := fmt.Sprintf("%d new reviews, %d linked to identical reviews, %d could not be submitted", c.New, c.Linked, c.Errors)
	if p := c.Pending(); p > 0 {
		s += fmt.Sprintf(", %d still to submit", p)
	}
	return s
}
