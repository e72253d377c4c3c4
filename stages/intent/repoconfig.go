package intent

import (
	"fmt"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/untrusted"
)

// repoInstructions appends to the purpose the instructions the
// repository's .reviewfleet.yaml files give for the item's files, once per
// distinct text with the files it applies to. They come from the change
// itself, so they are fenced like the purpose, with the names of the
// files they apply to.
func repoInstructions(files []review.File, fence untrusted.Fence) string {
	var order []string
	byText := map[string][]string{}
	for _, f := range files {
		t := strings.TrimSpace(f.Rules.Instructions)
		if t == "" {
			continue
		}
		if _, ok := byText[t]; !ok {
			order = append(order, t)
		}
		byText[t] = append(byText[t], untrusted.Name(f.Path))
	}
	var b strings.Builder
	for _, t := range order {
		fmt.Fprintf(&b, "\nReview instructions from the repository's configuration:\n%s",
			fence.Wrap("repository instructions", "For "+strings.Join(byText[t], ", ")+":\n"+t))
	}
	return b.String()
}

// disabled reports whether the repository's configuration turned risk off
// for the file at path.
func disabled(files []review.File, path string, risk review.RiskType) bool {
	for _, f := range files {
		if f.Path == path {
			return f.Rules.Disabled(risk)
		}
	}
	return false
}
