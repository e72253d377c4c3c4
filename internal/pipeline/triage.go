package pipeline

import (
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/stages/manager"
)

// Triage is the manager step between intent and verify (see Steps): it
// runs the manager with a review's manager settings and turns its
// decisions into the rows the store keeps. It is the pipeline's
// TriageFunc.
func Triage(findings []review.Finding, changed map[string][]int, cfg config.Manager) []review.Triage {
	mc := manager.DefaultConfig()
	mc.AnchorWindow, mc.MergeSimilarity, mc.MergeLineDistance = cfg.AnchorWindow, cfg.MergeSimilarity, cfg.MergeLineDistance
	mc.MaxPerFile, mc.MaxPerRiskType, mc.MaxTotal = cfg.MaxPerFile, cfg.MaxPerRiskType, cfg.MaxTotal
	for k, v := range cfg.TypeWeights {
		mc.TypeWeights[review.RiskType(k)] = v
	}
	for k, v := range cfg.SeverityWeights {
		mc.SeverityWeights[review.Severity(k)] = v
	}
	decisions := manager.Plan(findings, changed, mc)
	out := make([]review.Triage, len(decisions))
	for i, d := range decisions {
		out[i] = review.Triage{FindingID: d.FindingID, Status: d.Status, Reason: d.Reason, MergedInto: d.MergedInto, Score: d.Score, LineStart: d.LineStart, LineEnd: d.LineEnd}
	}
	return out
}
