package manager

import (
	"fmt"
	"math"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// opt adjusts a test finding.
type opt func(*review.Finding)

func risk(r review.RiskType) opt { return func(f *review.Finding) { f.RiskType = r } }
func conf(c float64) opt         { return func(f *review.Finding) { f.Confidence = c } }
func sev(s review.Severity) opt  { return func(f *review.Finding) { f.Severity = s } }
func desc(d string) opt          { return func(f *review.Finding) { f.Description = d } }

// mk builds an active medium robustness finding with confidence 0.8 and a
// description unique to its ID, then applies opts.
func mk(id int64, file string, start, end int, opts ...opt) review.Finding {
	f := review.Finding{
		ID:          id,
		ReviewID:    "r1",
		RiskType:    review.Robustness,
		File:        file,
		LineStart:   start,
		LineEnd:     end,
		Description: fmt.Sprintf("problem%d", id),
		Severity:    review.Medium,
		Confidence:  0.8,
		Status:      review.StatusActive,
	}
	for _, o := range opts {
		o(&f)
	}
	return f
}

// want is the expected outcome for one finding; code is the reason code.
type want struct {
	status     review.FindingStatus
	code       string
	mergedInto int64
}

var (
	active = want{status: review.StatusActive}
)

func dropped(code string) want { return want{status: review.StatusDropped, code: code} }
func mergedInto(id int64) want {
	return want{status: review.StatusMerged, code: ReasonDuplicateOf, mergedInto: id}
}

// checkPlan runs Plan and compares each decision with wants (keyed by ID).
func checkPlan(t *testing.T, findings []review.Finding, changed map[string][]int, cfg Config, wants map[int64]want) []Decision {
	t.Helper()
	got := Plan(findings, changed, cfg)
	if len(got) != len(findings) {
		t.Fatalf("Plan returned %d decisions for %d findings", len(got), len(findings))
	}
	for i, d := range got {
		if d.FindingID != findings[i].ID {
			t.Errorf("decision %d is for finding %d, want %d (input order)", i, d.FindingID, findings[i].ID)
		}
		w, ok := wants[d.FindingID]
		if !ok {
			t.Fatalf("test has no expectation for finding %d", d.FindingID)
		}
		if d.Status != w.status || ReasonCode(d.Reason) != w.code || d.MergedInto != w.mergedInto {
			t.Errorf("finding %d: got status %q reason %q merged into %d; want status %q code %q merged into %d",
				d.FindingID, d.Status, d.Reason, d.MergedInto, w.status, w.code, w.mergedInto)
		}
	}
	return got
}

func TestPlanAnchorRules(t *testing.T) {
	t.Parallel()
	changed := map[string][]int{
		"svc/a.go":     {10, 11, 12, 40},
		"svc/empty.go": {},
		"svc/unsorted": {50, 5},
	}
	tests := []struct {
		name       string
		finding    review.Finding
		cfg        func(*Config)
		want       want
		wantReason string // full reason, when the detail matters
		wantRange  [2]int // expected Decision.LineStart/LineEnd, when non-zero
	}{
		{name: "on a changed line", finding: mk(1, "svc/a.go", 11, 11), want: active},
		{name: "file not in change", finding: mk(1, "svc/b.go", 11, 11), want: dropped(ReasonFileNotInChange), wantReason: "file_not_in_change"},
		{name: "empty file path", finding: mk(1, "", 11, 11), want: dropped(ReasonFileNotInChange)},
		{name: "path spelled differently", finding: mk(1, "./svc/a.go", 11, 11), want: active},
		{name: "zero start", finding: mk(1, "svc/a.go", 0, 11), want: dropped(ReasonInvalidRange), wantReason: "invalid_range: lines 0-11"},
		{name: "negative start", finding: mk(1, "svc/a.go", -3, -1), want: dropped(ReasonInvalidRange)},
		{name: "swapped range is fixed", finding: mk(1, "svc/a.go", 14, 12), want: active, wantRange: [2]int{12, 14}},
		{name: "swapped range with zero end", finding: mk(1, "svc/a.go", 12, 0), want: dropped(ReasonInvalidRange)},
		{name: "exactly at the window", finding: mk(1, "svc/a.go", 17, 20), want: active},
		{name: "one past the window", finding: mk(1, "svc/a.go", 18, 20), want: dropped(ReasonFarFromChange),
			wantReason: "far_from_change: 6 lines from nearest changed line (window 5)"},
		{name: "far before first change", finding: mk(1, "svc/a.go", 1, 2), want: dropped(ReasonFarFromChange),
			wantReason: "far_from_change: 8 lines from nearest changed line (window 5)"},
		{name: "wide range spanning a change", finding: mk(1, "svc/a.go", 20, 60), want: active},
		{name: "nearer a later change", finding: mk(1, "svc/a.go", 36, 36), want: active},
		{name: "file with no changed lines", finding: mk(1, "svc/empty.go", 1, 1), want: dropped(ReasonFarFromChange),
			wantReason: "far_from_change: no changed lines in file (window 5)"},
		{name: "unsorted changed lines", finding: mk(1, "svc/unsorted", 7, 7), want: active},
		{name: "window zero, adjacent", finding: mk(1, "svc/a.go", 13, 13), cfg: func(c *Config) { c.AnchorWindow = 0 },
			want: dropped(ReasonFarFromChange), wantReason: "far_from_change: 1 lines from nearest changed line (window 0)"},
		{name: "negative window acts as zero", finding: mk(1, "svc/a.go", 12, 12), cfg: func(c *Config) { c.AnchorWindow = -4 }, want: active},
		{name: "wider window", finding: mk(1, "svc/a.go", 25, 25), cfg: func(c *Config) { c.AnchorWindow = 15 }, want: active},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			got := checkPlan(t, []review.Finding{tt.finding}, changed, cfg, map[int64]want{1: tt.want})
			if tt.wantReason != "" && got[0].Reason != tt.wantReason {
				t.Errorf("reason = %q, want %q", got[0].Reason, tt.wantReason)
			}
			if tt.wantRange != [2]int{} && (got[0].LineStart != tt.wantRange[0] || got[0].LineEnd != tt.wantRange[1]) {
				t.Errorf("range = %d-%d, want %d-%d", got[0].LineStart, got[0].LineEnd, tt.wantRange[0], tt.wantRange[1])
			}
		})
	}
}

func TestPlanMerge(t *testing.T) {
	t.Parallel()
	changed := map[string][]int{"a.go": {10, 20, 30, 40}, "b.go": {10}}
	const (
		lockText  = "map read without holding the mutex lock"
		lockText2 = "map read without holding mutex lock in handler"
		otherText = "integer overflow when size exceeds limit"
	)
	tests := []struct {
		name     string
		findings []review.Finding
		cfg      func(*Config)
		want     map[int64]want
	}{
		{
			name: "similar and near: lower score merges into higher",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, desc(lockText), conf(0.6)),
				mk(2, "a.go", 11, 12, desc(lockText2), conf(0.9)),
			},
			want: map[int64]want{1: mergedInto(2), 2: active},
		},
		{
			name: "equal score: lower ID survives whatever the order",
			findings: []review.Finding{
				mk(7, "a.go", 10, 10, desc(lockText)),
				mk(3, "a.go", 10, 10, desc(lockText)),
			},
			want: map[int64]want{7: mergedInto(3), 3: active},
		},
		{
			name: "severity raises the score of the survivor",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, desc(lockText), conf(0.8), sev(review.Low)),
				mk(2, "a.go", 10, 10, desc(lockText), conf(0.7), sev(review.High)),
			},
			want: map[int64]want{1: mergedInto(2), 2: active},
		},
		{
			name: "different risk type does not merge",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, desc(lockText), risk(review.Concurrency)),
				mk(2, "a.go", 10, 10, desc(lockText), risk(review.Robustness)),
			},
			want: map[int64]want{1: active, 2: active},
		},
		{
			name: "different file does not merge",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, desc(lockText)),
				mk(2, "b.go", 10, 10, desc(lockText)),
			},
			want: map[int64]want{1: active, 2: active},
		},
		{
			name: "gap of exactly the merge distance merges",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, desc(lockText)),
				mk(2, "a.go", 13, 14, desc(lockText)),
			},
			want: map[int64]want{1: active, 2: mergedInto(1)},
		},
		{
			name: "gap beyond the merge distance does not merge",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, desc(lockText)),
				mk(2, "a.go", 14, 14, desc(lockText)),
			},
			want: map[int64]want{1: active, 2: active},
		},
		{
			name: "dissimilar descriptions do not merge",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, desc(lockText)),
				mk(2, "a.go", 10, 10, desc(otherText)),
			},
			want: map[int64]want{1: active, 2: active},
		},
		{
			name: "similarity exactly at the threshold merges",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, desc("alpha beta delta")),
				mk(2, "a.go", 10, 10, desc("alpha beta gamma")),
			},
			want: map[int64]want{1: active, 2: mergedInto(1)},
		},
		{
			name: "merge is transitive and picks the best of the group",
			findings: []review.Finding{
				// 1~2 and 2~3 are similar and near; 1 and 3 are neither.
				mk(1, "a.go", 10, 10, desc("alpha beta gamma"), conf(0.5)),
				mk(2, "a.go", 13, 13, desc("beta gamma delta"), conf(0.6)),
				mk(3, "a.go", 16, 16, desc("gamma delta epsilon"), conf(0.7)),
			},
			want: map[int64]want{1: mergedInto(3), 2: mergedInto(3), 3: active},
		},
		{
			name: "dropped findings never merge",
			findings: []review.Finding{
				mk(1, "a.go", 100, 100, desc(lockText), conf(0.9)),
				mk(2, "a.go", 40, 40, desc(lockText), conf(0.5)),
			},
			want: map[int64]want{1: dropped(ReasonFarFromChange), 2: active},
		},
		{
			name: "similarity above one disables merging",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, desc(lockText)),
				mk(2, "a.go", 10, 10, desc(lockText)),
			},
			cfg:  func(c *Config) { c.MergeSimilarity = 1.01 },
			want: map[int64]want{1: active, 2: active},
		},
		{
			name: "empty descriptions do not merge",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, desc("")),
				mk(2, "a.go", 10, 10, desc("")),
			},
			want: map[int64]want{1: active, 2: active},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			before := append([]review.Finding(nil), tt.findings...)
			checkPlan(t, tt.findings, changed, cfg, tt.want)
			for i := range before {
				if before[i] != tt.findings[i] {
					t.Errorf("Plan modified finding %d: %+v → %+v", before[i].ID, before[i], tt.findings[i])
				}
			}
		})
	}
}

func TestPlanCaps(t *testing.T) {
	t.Parallel()
	changed := map[string][]int{"a.go": {10}, "b.go": {10}, "c.go": {10}}
	tests := []struct {
		name     string
		findings []review.Finding
		cfg      func(*Config)
		want     map[int64]want
	}{
		{
			name: "per-file cap drops the lowest score",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, conf(0.5)),
				mk(2, "a.go", 10, 10, conf(0.9)),
				mk(3, "a.go", 10, 10, conf(0.7)),
				mk(4, "b.go", 10, 10, conf(0.1)),
			},
			cfg:  func(c *Config) { c.MaxPerFile = 2 },
			want: map[int64]want{1: dropped(ReasonCapPerFile), 2: active, 3: active, 4: active},
		},
		{
			name: "per-risk-type cap",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, risk(review.Concurrency), conf(0.5)),
				mk(2, "b.go", 10, 10, risk(review.Concurrency), conf(0.9)),
				mk(3, "c.go", 10, 10, risk(review.Robustness), conf(0.2)),
			},
			cfg:  func(c *Config) { c.MaxPerRiskType = 1 },
			want: map[int64]want{1: dropped(ReasonCapPerRiskType), 2: active, 3: active},
		},
		{
			name: "total cap",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, conf(0.5)),
				mk(2, "b.go", 10, 10, conf(0.9)),
				mk(3, "c.go", 10, 10, conf(0.7)),
			},
			cfg:  func(c *Config) { c.MaxTotal = 2 },
			want: map[int64]want{1: dropped(ReasonCapTotal), 2: active, 3: active},
		},
		{
			name: "weights decide who is kept",
			findings: []review.Finding{
				// 0.9 × 0.8 × 0.7 = 0.504 against 0.6 × 1.2 × 1.2 = 0.864.
				mk(1, "a.go", 10, 10, risk(review.Static), sev(review.Low), conf(0.9)),
				mk(2, "b.go", 10, 10, risk(review.Authorization), sev(review.High), conf(0.6)),
			},
			cfg:  func(c *Config) { c.MaxTotal = 1 },
			want: map[int64]want{1: dropped(ReasonCapTotal), 2: active},
		},
		{
			name: "equal scores: the earlier place is kept, whatever the IDs",
			findings: []review.Finding{
				mk(9, "b.go", 10, 10),
				mk(4, "c.go", 10, 10),
				mk(7, "a.go", 10, 10),
			},
			cfg:  func(c *Config) { c.MaxTotal = 1 },
			want: map[int64]want{9: dropped(ReasonCapTotal), 4: dropped(ReasonCapTotal), 7: active},
		},
		{
			name: "zero and negative caps mean no cap",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10), mk(2, "a.go", 10, 10), mk(3, "a.go", 10, 10),
			},
			cfg: func(c *Config) {
				c.MaxPerFile, c.MaxPerRiskType, c.MaxTotal = 0, -1, 0
			},
			want: map[int64]want{1: active, 2: active, 3: active},
		},
		{
			name: "merged findings do not use up a cap",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, desc("nil map write panics"), conf(0.9)),
				mk(2, "a.go", 10, 10, desc("nil map write panics"), conf(0.8)),
				mk(3, "b.go", 10, 10, conf(0.7)),
			},
			cfg:  func(c *Config) { c.MaxTotal = 2 },
			want: map[int64]want{1: active, 2: mergedInto(1), 3: active},
		},
		{
			name: "a full file blocks before the total",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, conf(0.9)),
				mk(2, "a.go", 10, 10, conf(0.8)),
			},
			cfg:  func(c *Config) { c.MaxPerFile, c.MaxTotal = 1, 1 },
			want: map[int64]want{1: active, 2: dropped(ReasonCapPerFile)},
		},
		{
			name: "NaN confidence ranks last",
			findings: []review.Finding{
				mk(1, "a.go", 10, 10, conf(math.NaN())),
				mk(2, "b.go", 10, 10, conf(0.1)),
			},
			cfg:  func(c *Config) { c.MaxTotal = 1 },
			want: map[int64]want{1: dropped(ReasonCapTotal), 2: active},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			checkPlan(t, tt.findings, changed, cfg, tt.want)
		})
	}
}

func TestPlanScore(t *testing.T) {
	t.Parallel()
	changed := map[string][]int{"a.go": {1}}
	tests := []struct {
		name    string
		finding review.Finding
		cfg     func(*Config)
		want    float64
	}{
		{"defaults", mk(1, "a.go", 1, 1, risk(review.Concurrency), sev(review.Critical), conf(0.5)), nil, 0.5 * 1.1 * 1.5},
		{"dropped findings are scored too", mk(1, "z.go", 1, 1, risk(review.Intent), sev(review.Info), conf(1)), nil, 0.9 * 0.4},
		{"confidence above one is clamped", mk(1, "a.go", 1, 1, conf(3)), nil, 1},
		{"custom weight overrides one entry", mk(1, "a.go", 1, 1, risk(review.Static), sev(review.High), conf(0.5)),
			func(c *Config) { c.TypeWeights = map[review.RiskType]float64{review.Static: 2} }, 0.5 * 2 * 1.2},
		{"nil maps fall back to defaults", mk(1, "a.go", 1, 1, risk(review.Authorization), sev(review.Low), conf(0.5)),
			func(c *Config) { c.TypeWeights, c.SeverityWeights = nil, nil }, 0.5 * 1.2 * 0.7},
		{"unknown risk type and severity weigh 1", mk(1, "a.go", 1, 1, risk("style"), sev("nit"), conf(0.5)), nil, 0.5},
		{"negative weight counts as zero", mk(1, "a.go", 1, 1, conf(0.5)),
			func(c *Config) { c.SeverityWeights = map[review.Severity]float64{review.Medium: -1} }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			got := Plan([]review.Finding{tt.finding}, changed, cfg)[0].Score
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("score = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPlanEmpty(t *testing.T) {
	t.Parallel()
	if got := Plan(nil, nil, DefaultConfig()); len(got) != 0 {
		t.Errorf("Plan(nil) = %v, want no decisions", got)
	}
	got := Plan([]review.Finding{mk(1, "a.go", 1, 1)}, nil, Config{})
	if len(got) != 1 || ReasonCode(got[0].Reason) != ReasonFileNotInChange {
		t.Errorf("Plan with no changed files = %+v, want file_not_in_change", got)
	}
}

func TestDefaultConfigReturnsFreshMaps(t *testing.T) {
	t.Parallel()
	a := DefaultConfig()
	a.TypeWeights[review.Static] = 99
	a.SeverityWeights[review.Info] = 99
	b := DefaultConfig()
	if b.TypeWeights[review.Static] != 0.8 || b.SeverityWeights[review.Info] != 0.4 {
		t.Errorf("DefaultConfig shares its maps: %v %v", b.TypeWeights, b.SeverityWeights)
	}
}
