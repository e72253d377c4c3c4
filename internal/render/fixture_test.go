package render

import (
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// sampleReport builds a review with something in every section.
func sampleReport() *Report {
	created := time.Date(2026, 3, 4, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	return &Report{
		SchemaVersion: 1,
		ToolVersion:   "0.3.0",
		ReviewID:      "rev-42",
		Repo:          "acme/payments",
		BaseRef:       "main",
		HeadRef:       "feature/refunds",
		BaseSHA:       "1111111111111111111111111111111111111111",
		HeadSHA:       "2222222222222222222222222222222222222222",
		Status:        "succeeded",
		IntentMode:    "per_file",
		SkippedStages: []string{"verify"},
		Notes:         []string{"The model replies were a recorded exchange."},
		CreatedAt:     created,
		FinishedAt:    created.Add(3*time.Minute + 12*time.Second),
		Threshold:     0.6,
		Findings: []Finding{
			{
				Finding: review.Finding{
					ID: 7, ReviewID: "rev-42", RiskType: review.Concurrency, File: "refund/worker.go",
					LineStart: 41, LineEnd: 42, Severity: review.High, Confidence: 0.85, Status: review.StatusActive,
					Description: "The refunds map is written from several goroutines without holding `mu`.",
					Suggestion:  "Take `mu` around the write, or use a channel.",
				},
				Code: []CodeLine{
					{Line: 40, Text: "\tgo func() {"},
					{Line: 41, Text: "\t\trefunds[id] = r"},
					{Line: 42, Text: "\t}()"},
				},
				Trail: []Verdict{
					{Stage: "eval", Verdict: "confirmed", ConfidenceBefore: 0.85, ConfidenceAfter: 0.85, Reason: "No lock guards the map.", Model: "m2"},
					{Stage: "verify", Verdict: "anchored", ConfidenceBefore: 0.8, ConfidenceAfter: 0.8, Evidence: []string{"line 41 writes refunds"}, Model: "m1"},
					{Stage: "expert", Verdict: "confirmed", ConfidenceBefore: 0.8, ConfidenceAfter: 0.85, Evidence: []string{"dup of expert evidence"}, Model: "m2"},
				},
				Expert: &ExpertRun{StopReason: "accepted", Rounds: 4, ToolCalls: 7, Evidence: []string{"grep found no mu.Lock in worker.go", "refunds declared at worker.go:12"},
					Tools: map[string]map[string]int{"grep": {"hit": 2, "empty": 1}, "read_file": {"hit": 3}, "find_symbol": {"hit": 1}}},
			},
			{
				Finding: review.Finding{
					ID: 9, ReviewID: "rev-42", RiskType: review.Robustness, File: "refund/worker.go",
					LineStart: 60, LineEnd: 60, Severity: review.Medium, Confidence: 0.7, Status: review.StatusActive,
					Description: "Amount may be negative | zero when the order was voided.",
				},
				Code: []CodeLine{{Line: 60, Text: "total := amount - fee // uses ``` in a comment"}},
			},
			{
				Finding: review.Finding{
					ID: 3, ReviewID: "rev-42", RiskType: review.Authorization, File: "api/refund handler.go",
					LineStart: 15, LineEnd: 18, Severity: review.Low, Confidence: 0.65, Status: review.StatusActive,
					Description: "Refund endpoint does not check the caller owns the order.",
				},
			},
		},
		BelowThreshold: []Finding{
			{Finding: review.Finding{ID: 11, RiskType: review.Lifecycle, File: "refund/store.go", LineStart: 5, LineEnd: 9,
				Severity: review.Low, Confidence: 0.4, Status: review.StatusActive, Description: "Cache entry\nnot invalidated <after> delete."}},
		},
		Dropped: []Finding{
			{Finding: review.Finding{ID: 12, RiskType: review.Robustness, File: "refund/worker.go", LineStart: 200, LineEnd: 200,
				Severity: review.Medium, Confidence: 0.5, Status: review.StatusDropped,
				DropReason: "far_from_change: 42 lines from nearest changed line (window 5)", Description: "Unchecked error."}},
			{Finding: review.Finding{ID: 13, RiskType: review.Concurrency, File: "refund/worker.go", LineStart: 41, LineEnd: 41,
				Severity: review.High, Confidence: 0.6, Status: review.StatusMerged, MergedInto: 7,
				DropReason: "duplicate_of:7", Description: "Map race on refunds."}},
		},
		NotReviewed: []NotReviewed{
			{Path: "go.sum", Reason: "lock_file"},
			{Path: "assets/logo.png", Reason: "binary"},
		},
		FailedItems: []FailedItem{
			{Stage: "expert", ItemKey: "finding:21", Error: "reply did not validate: missing field | verdict"},
		},
		EvalSummary: map[review.RiskType]EvalCounts{
			review.Concurrency: {Confirmed: 1},
			review.Robustness:  {Disputed: 2, Uncertain: 1},
		},
		Usage: Usage{LLMCalls: 42, TokensIn: 1234567, TokensOut: 8910},
	}
}
