package manager

import "github.com/reviewfleet/reviewfleet/internal/review"

// Config tunes the manager. The zero value is usable but means "no caps, no
// window"; start from DefaultConfig and change what you need.
type Config struct {
	// AnchorWindow is how many lines a finding's range may lie from the
	// nearest changed line of its file before it is dropped. Default 5.
	// Negative values count as 0 (the range must touch a changed line).
	AnchorWindow int
	// MergeSimilarity is the token Jaccard similarity of two descriptions at
	// or above which two nearby findings of the same risk type merge.
	// Default 0.5. A value above 1 disables merging.
	MergeSimilarity float64
	// MergeLineDistance is the largest gap, in lines, between two ranges that
	// still counts as "near" for merging (overlapping ranges are at 0).
	// Default 3. Negative values count as 0.
	MergeLineDistance int
	// MaxPerFile caps the findings kept per file. Default 5. Zero or negative
	// means no cap.
	MaxPerFile int
	// MaxPerRiskType caps the findings kept per risk type. Default 8. Zero or
	// negative means no cap.
	MaxPerRiskType int
	// MaxTotal caps the findings kept for the review. Default 15. Zero or
	// negative means no cap.
	MaxTotal int
	// TypeWeights scale the score by risk type. Default: authorization 1.2,
	// concurrency 1.1, robustness 1.0, lifecycle 1.0, intent 0.9, static 0.8.
	// A risk type missing from the map uses its default weight, or 1.0 when
	// it has none. Negative or NaN weights count as 0.
	TypeWeights map[review.RiskType]float64
	// SeverityWeights scale the score by severity. Default: critical 1.5,
	// high 1.2, medium 1.0, low 0.7, info 0.4. Missing entries behave as for
	// TypeWeights.
	SeverityWeights map[review.Severity]float64
}

// DefaultConfig returns the documented defaults. The maps are fresh copies
// the caller may modify.
func DefaultConfig() Config {
	return Config{
		AnchorWindow:      5,
		MergeSimilarity:   0.5,
		MergeLineDistance: 3,
		MaxPerFile:        5,
		MaxPerRiskType:    8,
		MaxTotal:          15,
		TypeWeights:       defaultTypeWeights(),
		SeverityWeights:   defaultSeverityWeights(),
	}
}

func defaultTypeWeights() map[review.RiskType]float64 {
	return map[review.RiskType]float64{
		review.Authorization: 1.2,
		review.Concurrency:   1.1,
		review.Robustness:    1.0,
		review.Lifecycle:     1.0,
		review.Intent:        0.9,
		review.Static:        0.8,
		review.MemorySafety:  1.2,
		review.ResourceLeak:  1.0,
	}
}

func defaultSeverityWeights() map[review.Severity]float64 {
	return map[review.Severity]float64{
		review.Critical: 1.5,
		review.High:     1.2,
		review.Medium:   1.0,
		review.Low:      0.7,
		review.Info:     0.4,
	}
}
