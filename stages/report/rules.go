package report

import (
	"fmt"
	"maps"
	"slices"

	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// selectByRules is render.Select with the thresholds of the repository's
// configuration: a file's .reviewfleet.yaml thresholds override the
// configured ones for its findings. Findings are selected in groups that
// share their thresholds (duplicates only ever share a file, so grouping
// loses none) and the lists are put back in report order.
func selectByRules(active []render.Finding, threshold float64, overrides map[review.RiskType]float64, files []review.File) (kept, below []render.Finding) {
	perFile := map[string]map[review.RiskType]float64{}
	for _, f := range files {
		if len(f.Rules.Thresholds) == 0 {
			continue
		}
		o := maps.Clone(overrides)
		if o == nil {
			o = map[review.RiskType]float64{}
		}
		for k, v := range f.Rules.Thresholds {
			o[review.RiskType(k)] = v
		}
		perFile[f.Path] = o
	}
	if len(perFile) == 0 {
		return render.Select(active, threshold, overrides)
	}
	groups := map[string][]render.Finding{}
	groupOverrides := map[string]map[review.RiskType]float64{}
	for _, f := range active {
		o, ok := perFile[f.File]
		if !ok {
			o = overrides
		}
		key := fmt.Sprint(sortedPairs(o))
		groups[key] = append(groups[key], f)
		groupOverrides[key] = o
	}
	kept, below = []render.Finding{}, []render.Finding{}
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		k, b := render.Select(groups[key], threshold, groupOverrides[key])
		kept, below = append(kept, k...), append(below, b...)
	}
	render.SortFindings(kept)
	render.SortFindings(below)
	return kept, below
}

func sortedPairs(m map[review.RiskType]float64) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%g", k, v))
	}
	slices.Sort(out)
	return out
}
