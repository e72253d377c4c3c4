// Package verify is the evidence-anchor stage: every finding must point at
// real code. Deterministic checks come first (the file exists in the head
// snapshot, the cited lines exist, they touch or are near a changed hunk); a
// finding failing them is unanchored without any LLM call. The rest are
// read by the model, which answers {anchored, evidence, adjusted_confidence}.
// Unanchored findings end at most at the confidence floor; anchored ones
// keep their confidence unless the model adjusts it down (review.Confidence).
package verify

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
const SchemaName = "reviewfleet_verify"

// Structured is the LLM capability the stage needs.
type Structured interface {
	Structured(ctx context.Context, meta llm.Meta, req llm.StructuredRequest, out any) (llm.Usage, error)
}

// Handler runs verify tasks.
type Handler struct {
	Store   *store.Store
	LLM     Structured
	Prompts *prompts.Set
}

type reply struct {
	Anchored           bool    `json:"anchored"`
	Evidence           string  `json:"evidence"`
	AdjustedConfidence float64 `json:"adjusted_confidence"`
}

// Check is the outcome of the deterministic checks.
type Check struct {
	OK     bool
	Reason string
}

// Deterministic runs the checks that need no model: the file is in the head
// snapshot, the range is inside the file, and it lies within window lines
// of a changed line.
func Deterministic(f review.Finding, file *review.File, window int) Check {
	if file == nil || file.Content == nil {
		return Check{Reason: fmt.Sprintf("file %s is not in the head snapshot", f.File)}
	}
	n := len(source.Split(*file.Content))
	if f.LineStart < 1 || f.LineEnd < f.LineStart || f.LineEnd > n {
		return Check{Reason: fmt.Sprintf("lines %d-%d are outside %s, which has %d lines", f.LineStart, f.LineEnd, f.File, n)}
	}
	d := distance(file.ChangedLines, f.LineStart, f.LineEnd)
	if d > window {
		return Check{Reason: fmt.Sprintf("lines %d-%d are %d lines from the nearest changed line (window %d)", f.LineStart, f.LineEnd, d, window)}
	}
	return Check{OK: true}
}

func distance(changed []int, start, end int) int {
	best := 1 << 30
	for _, c := range changed {
		switch {
		case c < start:
			best = min(best, start-c)
		case c > end:
			best = min(best, c-end)
		default:
			return 0
		}
	}
	return best
}

// Work handles one verify item.
func (h *Handler) Work(ctx context.Context, j pipeline.Job) error {
	p := j.Payload
	t, err := pipeline.LoadFinding(ctx, h.Store, j)
	if err != nil {
		return err
	}
	cfg, f := t.Config, t.Finding
	var file *review.File
	if sf, err := h.Store.GetFile(ctx, p.ReviewID, f.File); err == nil {
		file = &sf
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	floor := cfg.Harness.VerifyConfidenceFloor
	v := review.Verdict{ReviewID: p.ReviewID, FindingID: f.ID, Stage: review.StageVerify, ConfidenceBefore: f.Confidence}

	if chk := Deterministic(f, file, cfg.Manager.AnchorWindow); !chk.OK {
		v.Verdict, v.Reason = review.VerdictUnanchored, chk.Reason
		v.ConfidenceAfter = review.Confidence(review.Outcome{Start: f.Confidence, Floor: floor, Verify: review.VerdictUnanchored})
		v.Evidence = evidence("deterministic: " + chk.Reason)
		return h.Store.FinishVerdictItem(ctx, p.Item, v, nil)
	}

	model := cfg.LLM.ModelFor(review.StageVerify)
	fence := untrusted.New()
	var out reply
	usage, err := h.LLM.Structured(ctx,
		llm.Meta{ReviewID: p.ReviewID, Stage: string(review.StageVerify), ItemKey: p.Item, Model: model},
		llm.StructuredRequest{System: h.Prompts.VerifySystem(floor) + "\n\n" + untrusted.Instructions(fence), User: userMessage(f, file, fence),
			SchemaName: SchemaName, Schema: h.Prompts.Schema("verify"), Temperature: float32(cfg.LLM.Temperature)},
		&out)
	if err != nil {
		if llm.IsPermanent(err) {
			return pipeline.Permanent(err)
		}
		return err
	}
	v.Model, v.TokensIn, v.TokensOut, v.Latency = model, usage.PromptTokens, usage.CompletionTokens, usage.Latency
	v.Reason, v.Evidence = strings.TrimSpace(out.Evidence), evidence(out.Evidence)
	v.ConfidenceAfter, v.Verdict = Apply(f.Confidence, out.Anchored, out.AdjustedConfidence, floor)
	return h.Store.FinishVerdictItem(ctx, p.Item, v, nil)
}

// Apply is the verify step of review.Confidence: anchored keeps the
// confidence unless the model's adjusted_confidence is lower, unanchored
// ends at most at the floor (and at the adjusted confidence when lower).
// Seed 000: adjusted_confidence is part of the verify answer.
func Apply(before float64, anchored bool, adjusted, floor float64) (after float64, verdict string) {
	verdict = review.VerdictUnanchored
	if anchored {
		verdict = review.VerdictAnchored
	}
	return review.Confidence(review.Outcome{Start: before, Floor: floor, Verify: verdict, VerifyAdjusted: adjusted}), verdict
}

// userMessage shows the finding and the code it cites. The finding is the
// intent model's reading of the change, and names a file of it: both are
// fenced with the code, and the file's name appears only inside fences.
func userMessage(f review.Finding, file *review.File, fence untrusted.Fence) string {
	name := untrusted.Name(f.File)
	var b strings.Builder
	b.WriteString("Finding to verify:\n")
	b.WriteString(fence.Wrap("finding", fmt.Sprintf("- file: %s\n- lines: %d-%d\n- risk type: %s\n- severity: %s\n- confidence: %.2f\n- description: %s",
		name, f.LineStart, f.LineEnd, f.RiskType, f.Severity, f.Confidence, f.Description)))
	fmt.Fprintf(&b, "\nCited lines with context (head version of the file):\n%s",
		fence.Wrap("head version of "+name, source.Format(source.Window(*file.Content, f.LineStart, f.LineEnd, 8))))
	if numbered, err := diff.NumberedText(file.Diff); err == nil {
		fmt.Fprintf(&b, "\nThe change to this file, with new-side line numbers:\n%s", fence.Wrap("diff of "+name, numbered))
	}
	return b.String()
}

func evidence(items ...string) json.RawMessage {
	var keep []string
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" {
			keep = append(keep, s)
		}
	}
	if keep == nil {
		keep = []string{}
	}
	b, _ := json.Marshal(keep)
	return b
}
