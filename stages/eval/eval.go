// Package eval is the independent quality gate. A reviewer that is not the
// expert restates the expert's conclusion as a falsifiable claim, looks for
// counter-evidence from a different angle, and answers confirmed, disputed
// or uncertain. The stored confidence follows review.Confidence whatever
// number the model gives: confirmed → max(expert, 0.7) only when the expert
// established the finding (else unchanged); disputed → min(expert, 0.3);
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

// Apply is the eval step of review.Confidence. The model's own
// final_confidence is recorded as evidence but never used; an eval
// "confirmed" raises only what the expert confirmed with accepted
// evidence: a second reader cannot establish what the first did not.
func Apply(before float64, expertVerdict, verdict string) (float64, string) {
	switch verdict {
	case review.VerdictConfirmed, review.VerdictDisputed:
	default:
		verdict = review.VerdictUncertain
	}
	return review.Confidence(review.Outcome{Start: before, Expert: expertVerdict, ExpertConfidence: before, Floor: before, Eval: verdict}), verdict
}

// Work handles one eval item.
func (h *Handler) Work(ctx context.Context, j pipeline.Job) error {
	p := j.Payload
	t, err := pipeline.LoadFinding(ctx, h.Store, j)
	if err != nil {
		return err
	}
	r, cfg, f := t.Review, t.Config, t.Finding
	expertVerdict := ""
	ev, err := h.Store.GetVerdict(ctx, f.ID, review.StageExpert)
	switch {
	case err == nil:
		expertVerdict = ev.Verdict
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	fence := untrusted.New()
	user, err := h.userMessage(ctx, r.ID, f, ev, fence)
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
	after, verdict := Apply(f.Confidence, expertVerdict, strings.ToLower(strings.TrimSpace(out.Verdict)))
	evidence, _ := json.Marshal([]string{
		"claim: " + strings.TrimSpace(out.Claim),
		"counter-evidence: " + strings.TrimSpace(out.CounterEvidence),
		fmt.Sprintf("model's own confidence: %.2f (not used)", out.FinalConfidence),
	})
	return h.Store.FinishVerdictItem(ctx, p.Item, review.Verdict{
		ReviewID: r.ID, FindingID: f.ID, Stage: review.StageEval, Verdict: verdict,
		ConfidenceBefore: f.Confidence, ConfidenceAfter: after, Reason: strings.TrimSpace(out.Reason),
		Evidence: evidence, Model: model, TokensIn: usage.PromptTokens, TokensOut: usage.CompletionTokens,
		Latency: usage.Latency,
	}, nil)
}

// userMessage gives the reviewer the claim and the evidence the expert's
// checks established — not the expert's prompt nor its reasoning, on
// which a second reader would anchor — and says
// exactly what else it has: the cited lines with 25 lines either side and
// the change to the file. It has no tools.
func (h *Handler) userMessage(ctx context.Context, reviewID string, f review.Finding, expert review.Verdict, fence untrusted.Fence) (string, error) {
	// The claim is the intent model's reading of the change and the
	// evidence the expert's reading of the repository: both fenced, with
	// the file's name, like the code.
	name := untrusted.Name(f.File)
	var claim strings.Builder
	fmt.Fprintf(&claim, "- file: %s\n- lines: %d-%d\n- risk type: %s\n- severity: %s\n- confidence so far: %.2f\n- claim: %s\n",
		name, f.LineStart, f.LineEnd, f.RiskType, f.Severity, f.Confidence, f.Description)
	if f.Suggestion != "" {
		fmt.Fprintf(&claim, "- suggested fix: %s\n", f.Suggestion)
	}
	if expert.Verdict != "" {
		fmt.Fprintf(&claim, "- expert verdict: %s\n", expert.Verdict)
		var ev []string
		if json.Unmarshal(expert.Evidence, &ev) == nil {
			for _, e := range ev {
				fmt.Fprintf(&claim, "  - evidence checked against the repository: %s\n", e)
			}
		}
	}
	var b strings.Builder
	b.WriteString("Claim under review:\n" + fence.Wrap("claim", claim.String()))
	b.WriteString("\nWhat you have: the cited lines of the head version with 25 lines either side, and the change to this file. " +
		"You have no tools and cannot read other files: when the claim depends on code you cannot see, answer uncertain.\n")
	file, err := h.Store.GetFile(ctx, reviewID, f.File)
	if errors.Is(err, store.ErrNotFound) {
		return b.String(), nil // a finding without a stored file is judged on the claim alone
	}
	if err != nil {
		return "", fmt.Errorf("load %s for eval: %w", name, err)
	}
	if file.Content != nil {
		fmt.Fprintf(&b, "\nHead version of the file around the cited lines:\n%s",
			fence.Wrap("head version of "+name, source.Format(source.Window(*file.Content, f.LineStart, f.LineEnd, 25))))
	}
	if numbered, err := diff.NumberedText(file.Diff); err == nil {
		fmt.Fprintf(&b, "\nThe change to this file, with new-side line numbers:\n%s", fence.Wrap("diff of "+name, numbered))
	}
	return b.String(), nil
}
