package manager

import "github.com/reviewfleet/reviewfleet/internal/review"

// weights holds the type and severity weights of a Config, with the defaults
// filled in, resolved once per Plan.
type weights struct {
	types      map[review.RiskType]float64
	severities map[review.Severity]float64
}

func newWeights(cfg Config) weights {
	types := defaultTypeWeights()
	for k, v := range cfg.TypeWeights {
		types[k] = v
	}
	severities := defaultSeverityWeights()
	for k, v := range cfg.SeverityWeights {
		severities[k] = v
	}
	return weights{types: types, severities: severities}
}

// score is confidence × type weight × severity weight. Confidence is clamped
// to [0, 1] first so a malformed value cannot dominate the ranking.
func (w weights) score(f review.Finding) float64 {
	return review.ClampConfidence(f.Confidence) *
		weightOf(w.types, f.RiskType) *
		weightOf(w.severities, f.Severity)
}

// weightOf returns m[key], 1.0 when key has no entry, and 0 for a negative or
// NaN weight.
func weightOf[K comparable](m map[K]float64, key K) float64 {
	v, ok := m[key]
	switch {
	case !ok:
		return 1
	case v != v || v < 0:
		return 0
	}
	return v
}
