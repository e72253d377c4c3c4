package render

import (
	"slices"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

func sf(id int64, rt review.RiskType, sev review.Severity, file string, start, end int, conf float64, desc string) Finding {
	return Finding{Finding: review.Finding{
		ID: id, RiskType: rt, Severity: sev, File: file, LineStart: start, LineEnd: end,
		Confidence: conf, Description: desc, Status: review.StatusActive,
	}}
}

func ids(fs []Finding) []int64 {
	out := make([]int64, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

// sub and mul do float64 arithmetic at run time (constant expressions are
// exact and would hide the rounding under test).
func sub(a, b float64) float64 { return a - b }
func mul(a, b float64) float64 { return a * b }

func TestSelect(t *testing.T) {
	t.Parallel()
	if sub(0.94, 0.34) >= 0.6 {
		t.Fatal("test premise broken: 0.94-0.34 is expected to round below 0.6")
	}
	const r, c, a = review.Robustness, review.Concurrency, review.Authorization
	tests := []struct {
		name      string
		findings  []Finding
		threshold float64
		overrides map[review.RiskType]float64
		wantKept  []int64
		wantBelow []int64
	}{
		{
			name:      "threshold is inclusive",
			findings:  []Finding{sf(1, r, review.Medium, "a.go", 1, 1, 0.6, "x1"), sf(2, r, review.Medium, "a.go", 2, 2, 0.59, "x2")},
			threshold: 0.6,
			wantKept:  []int64{1}, wantBelow: []int64{2},
		},
		{
			name:      "rounding just under the threshold still counts",
			findings:  []Finding{sf(1, r, review.Medium, "a.go", 1, 1, mul(0.75, 0.8), "x1"), sf(2, r, review.Medium, "a.go", 2, 2, sub(0.94, 0.34), "x2")},
			threshold: 0.6,
			wantKept:  []int64{1, 2}, wantBelow: []int64{},
		},
		{
			name:      "override raises the bar for one risk type",
			findings:  []Finding{sf(1, r, review.Medium, "a.go", 1, 1, 0.7, "x1"), sf(2, c, review.Medium, "a.go", 2, 2, 0.7, "x2")},
			threshold: 0.6, overrides: map[review.RiskType]float64{c: 0.8},
			wantKept: []int64{1}, wantBelow: []int64{2},
		},
		{
			name:      "override lowers the bar for one risk type",
			findings:  []Finding{sf(1, a, review.Medium, "a.go", 1, 1, 0.45, "x1"), sf(2, r, review.Medium, "a.go", 2, 2, 0.45, "x2")},
			threshold: 0.6, overrides: map[review.RiskType]float64{a: 0.4},
			wantKept: []int64{1}, wantBelow: []int64{2},
		},
		{
			name: "only active findings",
			findings: func() []Finding {
				d := sf(2, r, review.High, "a.go", 1, 1, 0.9, "x2")
				d.Status = review.StatusDropped
				m := sf(3, r, review.High, "a.go", 1, 1, 0.9, "x3")
				m.Status = review.StatusMerged
				return []Finding{sf(1, r, review.High, "a.go", 1, 1, 0.9, "x1"), d, m}
			}(),
			threshold: 0.6,
			wantKept:  []int64{1}, wantBelow: []int64{},
		},
		{
			name: "exact duplicate keeps the more confident one",
			findings: []Finding{
				sf(1, r, review.High, "a.go", 10, 12, 0.7, "Nil  map write!"),
				sf(2, r, review.High, "./a.go", 12, 14, 0.9, "nil map write"),
			},
			threshold: 0.6,
			wantKept:  []int64{2}, wantBelow: []int64{},
		},
		{
			name: "duplicate below the threshold is not listed below",
			findings: []Finding{
				sf(1, r, review.High, "a.go", 10, 12, 0.9, "nil map write"),
				sf(2, r, review.High, "a.go", 10, 10, 0.3, "nil map write"),
			},
			threshold: 0.6,
			wantKept:  []int64{1}, wantBelow: []int64{},
		},
		{
			name: "not duplicates: other lines, other type, other text",
			findings: []Finding{
				sf(1, r, review.High, "a.go", 10, 12, 0.9, "nil map write"),
				sf(2, r, review.High, "a.go", 13, 14, 0.9, "nil map write"),
				sf(3, c, review.High, "a.go", 10, 12, 0.9, "nil map write"),
				sf(4, r, review.High, "a.go", 10, 12, 0.9, "nil map read"),
			},
			threshold: 0.6,
			wantKept:  []int64{1, 3, 4, 2}, wantBelow: []int64{},
		},
		{
			name: "ordered by severity, file, line, ID",
			findings: []Finding{
				sf(5, r, review.Low, "a.go", 1, 1, 0.9, "x5"),
				sf(4, r, review.Critical, "b.go", 9, 9, 0.9, "x4"),
				sf(3, r, review.Critical, "a.go", 9, 9, 0.9, "x3"),
				sf(2, r, review.Critical, "a.go", 2, 2, 0.9, "x2"),
				sf(1, r, review.Critical, "a.go", 2, 2, 0.9, "x1"),
				sf(6, r, "bogus", "a.go", 1, 1, 0.9, "x6"),
			},
			threshold: 0.6,
			wantKept:  []int64{1, 2, 3, 4, 5, 6}, wantBelow: []int64{},
		},
		{
			name:      "nothing in, nothing out",
			threshold: 0.6,
			wantKept:  []int64{}, wantBelow: []int64{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			kept, below := Select(tt.findings, tt.threshold, tt.overrides)
			if kept == nil || below == nil {
				t.Fatalf("Select returned a nil slice: kept %v, below %v", kept, below)
			}
			if !slices.Equal(ids(kept), tt.wantKept) {
				t.Errorf("kept = %v, want %v", ids(kept), tt.wantKept)
			}
			if !slices.Equal(ids(below), tt.wantBelow) {
				t.Errorf("below = %v, want %v", ids(below), tt.wantBelow)
			}
		})
	}
}

func TestSelectIgnoresInputOrder(t *testing.T) {
	t.Parallel()
	base := []Finding{
		sf(1, review.Robustness, review.High, "a.go", 10, 12, 0.7, "nil map write"),
		sf(2, review.Robustness, review.High, "a.go", 11, 11, 0.7, "Nil map write."),
		sf(3, review.Concurrency, review.Medium, "b.go", 1, 1, 0.5, "race"),
		sf(4, review.Intent, review.Low, "a.go", 3, 3, 0.9, "wrong branch"),
	}
	wantKept, wantBelow := Select(base, 0.6, nil)
	rev := slices.Clone(base)
	slices.Reverse(rev)
	gotKept, gotBelow := Select(rev, 0.6, nil)
	if !slices.Equal(ids(gotKept), ids(wantKept)) || !slices.Equal(ids(gotBelow), ids(wantBelow)) {
		t.Errorf("order changed the result: %v/%v vs %v/%v", ids(gotKept), ids(gotBelow), ids(wantKept), ids(wantBelow))
	}
	if !slices.Contains(ids(wantKept), 1) || slices.Contains(ids(wantKept), 2) {
		t.Errorf("duplicate tie should keep the lower ID, kept %v", ids(wantKept))
	}
}
