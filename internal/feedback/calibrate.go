package feedback

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/store"
)

// Calibration bounds (harness.calibrate): a risk type's threshold moves
// only once MinDecided of its posted findings were decided (dismissed, or
// on a merged pull request); it moves by CalibrationGain × (dismissed
// share − resolved share), never more than MaxRaise up or MaxLower down
// from the configured threshold, and stays within [0.05, 0.95].
const (
	MinDecided      = 10
	CalibrationGain = 0.3
	MaxRaise        = 0.2
	MaxLower        = 0.1
)

// Calibrate returns the thresholds a repository's outcomes set per risk
// type, from the configured threshold (base, or the risk type's override),
// each with why. Risk types with too few decided findings keep theirs and
// are not listed.
func Calibrate(base float64, overrides map[string]float64, stats map[string]store.Calibration) []render.CalibratedThreshold {
	var out []render.CalibratedThreshold
	for _, risk := range slices.Sorted(maps.Keys(stats)) {
		c := stats[risk]
		if c.Decided < MinDecided {
			continue
		}
		from := base
		if o, ok := overrides[risk]; ok {
			from = o
		}
		dismissed := float64(c.Dismissed) / float64(c.Decided)
		resolved := float64(c.Resolved) / float64(c.Decided)
		t := from + CalibrationGain*(dismissed-resolved)
		t = min(max(t, from-MaxLower, 0.05), from+MaxRaise, 0.95)
		t = math.Round(t*100) / 100
		out = append(out, render.CalibratedThreshold{RiskType: risk, Threshold: t, Base: from,
			Reason: fmt.Sprintf("of %d decided findings in this repository %d were dismissed (%.0f%%) and %d resolved (%.0f%%): %.2f moved by %+.2f",
				c.Decided, c.Dismissed, 100*dismissed, c.Resolved, 100*resolved, from, t-from)})
	}
	return out
}
