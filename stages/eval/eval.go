// Package eval is the independent quality gate. A reviewer that is not the
// expert restates the expert's conclusion as a falsifiable claim, looks for
// counter-evidence from a different angle, and answers confirmed, disputed
// or uncertain. The stored confidence follows a fixed rule whatever number
// the model gives: confirmed → max(expert, 0.7); disputed → 0.3;
// uncertain → 0.8 × expert.
package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/prompts"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/source"
	"github.com/reviewfleet/reviewfleet/internal/untrusted"
	"github.com/reviewfleet/reviewfleet/store"
)

// TaskType is the permanent asynq type name of eval tasks.
const TaskType = "review:eval"

// SchemaName names the structured-output schema of this stage.
const SchemaName = "reviewfleet_eval"

// Structured is the LLM capability the stage needs.
type Structured interface {
	Structured(ctx context.Context, meta llm.Meta, req llm.StructuredRequest, out any) (llm.Usage, error)
}

// Handler runs eval tasks.
type Handler struct {
	Store   *store.Store
	LLM     Structured
	Prompts *prompts.Set
}

type reply struct {
	Claim           string  `json:"claim"`
	CounterEvidence string  `json:"counter_evidence"`
	Verdict         string  `json:"verdict"`
	Reason          string  `json:"reason"`
	FinalConfidence float64 `json:"final_confidence"`
}

// Apply is the eval gate's confidence rule. The model's own
// final_confidence is recorded as evidence but never used.
func Apply(expert float64, verdict string) (float64, string) {
	switch verdict {
	case review.VerdictConfirmed:
		return max(expert, 0.7), verdict
	case review.VerdictDisputed:
		return 0.3, verdict
	default:
		return review.ClampConfidence(0.8 * expert), review.VerdictUncertain
	}
}

// Work handles one eval item.
func (h *Handler) Work(ctx context.Context, p pipeline.Payload) error {
	t, err := pipeline.LoadFinding(ctx, h.Store, p)
	if err != nil {
		return err
	}
	r, cfg, f := t.Review, t.Config, t.Finding
	fence := untrusted.New()
	user, err := h.userMessage(ctx, r.ID, f, fence)
	if err != nil {
		return err
	}
	model := cfg.LLM.ModelFor(review.StageEval)
	var out reply
	usage, err := h.LLM.Structured(ctx,
		llm.Meta{ReviewID: r.ID, Stage: string(review.StageEval), ItemKey: p.Item, Model: model},
		llm.StructuredRequest{System: h.Prompts.EvalSystem() + "\n\n" + untrusted.Instructions(fence), User: user, SchemaName: SchemaName,
			Schema: h.Prompts.Schema("eval"), Temperature: float32(cfg.LLM.Temperature)},
		&out)
	if err != nil {
		if llm.IsPermanent(err) {
			return pipeline.Permanent(err)
		}
		return err
	}
	after, verdict := Apply(f.Confidence, strings.ToLower(strings.TrimSpace(out.Verdict)))
	ev, _ := json.Marshal([]string{
		"claim: " + strings.TrimSpace(out.Claim),
		"counter-evidence: " + strings.TrimSpace(out.CounterEvidence),
		fmt.Sprintf("model's own confidence: %.2f (not used)", out.FinalConfidence),
	})
	return h.Store.FinishVerdictItem(ctx, p.Item, store.Verdict{
		ReviewID: r.ID, FindingID: f.ID, Stage: review.StageEval, Verdict: verdict,
		ConfidenceBefore: f.Confidence, ConfidenceAfter: after, Reason: strings.TrimSpace(out.Reason),
		Evidence: ev, Model: model, TokensIn: usage.PromptTokens, TokensOut: usage.CompletionTokens,
		Latency: usage.Latency,
	}, nil)
}

// userMessage gives the reviewer the expert's conclusion, the code and the
// change — but not the expert's prompt.
func (h *Handler) userMessage(ctx context.Context, reviewID string, f review.Finding, fence untrusted.Fence) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Expert conclusion under review:\n- file: %s\n- lines: %d-%d\n- risk type: %s\n- severity: %s\n- expert confidence: %.2f\n- conclusion: %s\n",
		f.File, f.LineStart, f.LineEnd, f.RiskType, f.Severity, f.Confidence, f.Description)
	if f.Suggestion != "" {
		fmt.Fprintf(&b, "- suggested fix: %s\n", f.Suggestion)
	}
	switch v, err := h.Store.GetVerdict(ctx, f.ID, review.StageExpert); {
	case err == nil:
		fmt.Fprintf(&b, "- expert verdict: %s — %s\n", v.Verdict, v.Reason)
		var ev []string
		if json.Unmarshal(v.Evidence, &ev) == nil {
			for _, e := range ev {
				fmt.Fprintf(&b, "  - evidence: %s\n", e)
			}
		}
	case !errors.Is(err, store.ErrNotFound):
		return "", err
	}
	file, err := h.Store.GetFile(ctx, reviewID, f.File)
	if errors.Is(err, store.ErrNotFound) {
		return b.String(), nil // a finding without a stored file is judged on the conclusion alone
	}
	if err != nil {
		return "", fmt.Errorf("load %s for eval: %w", f.File, err)
	}
	if file.Content != nil {
		fmt.Fprintf(&b, "\nHead version of %s around the cited lines:\n%s", f.File,
			fence.Wrap("head version of "+f.File, source.Format(source.Window(*file.Content, f.LineStart, f.LineEnd, 25))))
	}
	if numbered, err := diff.NumberedText(file.Diff); err == nil {
		fmt.Fprintf(&b, "\nThe change to this file, with new-side line numbers:\n%s", fence.Wrap("diff of "+f.File, numbered))
	}
	return b.String(), nil
}
