// Package intent is the first LLM stage: for one file (or one chunk of
// files) of a change it asks the model for candidate risks, with the diff
// shown on explicit new-side line numbers and a prompt assembled from the
// core instructions plus the pattern packs the diff calls for.
package intent

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/fingerprint"
	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/prompts"
	"github.com/reviewfleet/reviewfleet/internal/redact"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/source"
	"github.com/reviewfleet/reviewfleet/internal/untrusted"
	"github.com/reviewfleet/reviewfleet/store"
)

// SchemaName names the structured-output schema of this stage.
const SchemaName = "reviewfleet_intent"

// Intent modes recorded on the review.
const (
	ModePerFile = "per_file"
	ModeChunked = "chunked"
)

// ItemPayload is stored on each intent ledger row: the files it covers.
type ItemPayload struct {
	Mode  string   `json:"mode"`
	Files []string `json:"files"`
}

// Structured is the LLM capability the stage needs.
type Structured interface {
	Structured(ctx context.Context, meta llm.Meta, req llm.StructuredRequest, out any) (llm.Usage, error)
}

// Handler runs intent tasks.
type Handler struct {
	Store   *store.Store
	LLM     Structured
	Prompts *prompts.Set
	// Warm, when set, is told of a review as soon as an intent item of it
	// found something, so what its expert runs read (the head tree) is
	// prepared while verify runs (snapshot.Cache.Warm).
	Warm func(review.Review)
}

// reply is the schema-shaped answer of the model.
type reply struct {
	Findings []struct {
		RiskType    string  `json:"risk_type"`
		File        string  `json:"file"`
		LineStart   int     `json:"line_start"`
		LineEnd     int     `json:"line_end"`
		Description string  `json:"description"`
		Suggestion  string  `json:"suggestion"`
		Quote       string  `json:"quote"`
		Fix         string  `json:"fix"`
		Severity    string  `json:"severity"`
		Confidence  float64 `json:"confidence"`
	} `json:"findings"`
}

// Work handles one intent item.
func (h *Handler) Work(ctx context.Context, j pipeline.Job) error {
	p, r, cfg, it := j.Payload, j.Review, j.Config, j.Item
	var ip ItemPayload
	if err := json.Unmarshal(it.Payload, &ip); err != nil || len(ip.Files) == 0 {
		return pipeline.Permanent(fmt.Errorf("intent item %s has no files: %s", p.Item, it.Payload))
	}
	files, err := h.Store.GetFiles(ctx, p.ReviewID, ip.Files)
	if err != nil {
		return pipeline.PermanentIfMissing(err)
	}

	var packs []prompts.Pack
	used := make(map[string][]string, len(files))
	for _, f := range files {
		fp := prompts.AllPacks
		if cfg.Harness.ProgressiveContextEnabled {
			fp = prompts.DetectPacks(f.Path, f.Diff)
		}
		packs = union(packs, fp)
		used[f.Path] = packNames(fp)
	}
	if err := h.Store.SetFilesPacks(ctx, p.ReviewID, used); err != nil {
		return err
	}
	system := h.Prompts.IntentSystem(packs)
	if ip.Mode == ModeChunked {
		system = h.Prompts.IntentChunkedSystem(packs)
	}
	all, err := h.Store.ListFileSummaries(ctx, p.ReviewID)
	if err != nil {
		return err
	}
	fence := untrusted.New()
	system += "\n\n" + untrusted.Instructions(fence)
	user, err := userMessage(r, files, ip.Mode == ModeChunked, fence)
	if err != nil {
		return pipeline.Permanent(err)
	}
	user += changeList(all, fence)
	var out reply
	_, err = h.LLM.Structured(ctx,
		llm.Meta{ReviewID: p.ReviewID, Stage: string(review.StageIntent), ItemKey: p.Item, Model: cfg.LLM.ModelFor(review.StageIntent)},
		llm.StructuredRequest{System: system, User: user, SchemaName: SchemaName,
			Schema: h.Prompts.Schema("intent"), Temperature: float32(cfg.LLM.Temperature)},
		&out)
	if err != nil {
		if llm.IsPermanent(err) {
			return pipeline.Permanent(err)
		}
		return err
	}
	found := normalise(out, files)
	if err := h.Store.FinishIntentItem(ctx, p.ReviewID, p.Item, found); err != nil {
		return err
	}
	if len(found) > 0 && h.Warm != nil {
		h.Warm(r)
	}
	return nil
}

// userMessage shows the model each file's diff on new-side line numbers;
// in per-file mode it also shows the head-side content around the change.
// Everything taken from the change is fenced: the repository, refs and
// purpose in one block, each file (its heading, diff and content) in
// another, so no name from the repository starts a line of the message.
func userMessage(r review.Review, files []review.File, chunked bool, fence untrusted.Fence) (string, error) {
	var b strings.Builder
	var head strings.Builder
	fmt.Fprintf(&head, "Repository: %s\nChange: %s..%s\n", untrusted.Name(redact.String(r.Repo)), short(r.BaseRef, r.BaseSHA), short(r.HeadRef, r.HeadSHA))
	if p := strings.TrimSpace(r.Purpose); p != "" {
		fmt.Fprintf(&head, "Purpose of the change (as its author stated it):\n%s", p)
	}
	b.WriteString(fence.Wrap("the change", head.String()))
	b.WriteString(repoInstructions(files, fence))
	for _, f := range files {
		numbered, err := diff.NumberedText(f.Diff)
		if err != nil {
			return "", fmt.Errorf("re-read diff of %s: %w", untrusted.Name(f.Path), err)
		}
		var fb strings.Builder
		fmt.Fprintf(&fb, "### File: %s (%s", untrusted.Name(f.Path), f.Change)
		if f.OldPath != "" && f.OldPath != f.Path {
			fmt.Fprintf(&fb, " from %s", untrusted.Name(f.OldPath))
		}
		fmt.Fprintf(&fb, ", +%d -%d)\nDiff with new-side line numbers:\n%s", f.Additions, f.Deletions, numbered)
		if !chunked && f.Content != nil {
			fmt.Fprintf(&fb, "\nHead version (numbered):\n%s", source.Excerpt(*f.Content, f.ChangedLines, 30, 600))
		}
		b.WriteString("\n" + fence.Wrap("file "+untrusted.Name(f.Path), fb.String()))
	}
	return b.String(), nil
}

// short names one side of the change: its ref and abbreviated commit,
// each quoted when it could break the line.
func short(ref, sha string) string {
	if len(sha) > 12 {
		sha = sha[:12]
	}
	ref, sha = untrusted.Name(ref), untrusted.Name(sha)
	switch {
	case ref != "" && sha != "" && ref != sha:
		return ref + " (" + sha + ")"
	case ref != "":
		return ref
	}
	return sha
}

// normalise turns the model's reply into findings: the file is matched to
// the files the item covers (in per-file mode the item's file is the only
// possible one), ranges are put in order, values are bounded.
func normalise(out reply, files []review.File) []review.Finding {
	var fs []review.Finding
	for _, r := range out.Findings {
		file, ok := matchFile(r.File, files)
		if !ok {
			continue
		}
		risk, err := review.ParseRiskType(r.RiskType)
		if err != nil {
			risk = review.Robustness
		}
		sev, err := review.ParseSeverity(r.Severity)
		if err != nil {
			sev = review.Medium
		}
		// Line 0 (or less) names no line: models use it for "the whole
		// file". It becomes line 1, where the anchor checks judge it like
		// any other; an end before the start is put in order.
		start, end := max(r.LineStart, 1), r.LineEnd
		if end < 1 {
			end = start
		}
		if end < start {
			start, end = end, start
		}
		desc := strings.TrimSpace(r.Description)
		if desc == "" {
			continue
		}
		if disabled(files, file, risk) {
			continue // the repository's configuration turned this risk type off here
		}
		head := headLines(files, file)
		fs = append(fs, review.Finding{
			Fingerprint: fingerprint.Of(file, enclosingSymbol(files, file, start), string(risk), desc),
			RiskType:    risk, File: file, LineStart: start, LineEnd: end, Description: desc,
			Suggestion: strings.TrimSpace(r.Suggestion), Severity: sev,
			Confidence: review.ClampConfidence(r.Confidence),
			Quote:      checkedQuote(r.Quote, head, start, end), Fix: checkedFix(r.Fix, head),
		})
	}
	return fs
}

func matchFile(name string, files []review.File) (string, bool) {
	if len(files) == 1 {
		return files[0].Path, true
	}
	name = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(name), "a/"), "b/")
	name = strings.TrimPrefix(name, "./")
	for _, f := range files {
		if f.Path == name || untrusted.Name(f.Path) == name { // the prompt shows unusual names quoted
			return f.Path, true
		}
	}
	var hit string
	for _, f := range files { // a bare or suffix name that matches exactly one file
		if strings.HasSuffix(f.Path, "/"+name) || path.Base(f.Path) == name {
			if hit != "" {
				return "", false
			}
			hit = f.Path
		}
	}
	return hit, hit != ""
}

func union(a, b []prompts.Pack) []prompts.Pack {
	seen := map[prompts.Pack]bool{}
	var out []prompts.Pack
	for _, p := range append(append([]prompts.Pack{}, a...), b...) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func packNames(ps []prompts.Pack) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}

// maxListedFiles bounds the list of touched files an intent prompt carries.
const maxListedFiles = 300

// changeList names every file the change touches, with its change kind
// and size, so a finding can name breakage across files (a caller not
// updated, a renamed symbol still used elsewhere) even though the model
// sees only some diffs.
func changeList(all []review.FileSummary, fence untrusted.Fence) string {
	if len(all) == 0 {
		return ""
	}
	var b strings.Builder
	for i, f := range all {
		if i == maxListedFiles {
			fmt.Fprintf(&b, "… and %d more files\n", len(all)-i)
			break
		}
		fmt.Fprintf(&b, "%s (%s", untrusted.Name(f.Path), f.Change)
		if f.OldPath != "" && f.OldPath != f.Path {
			fmt.Fprintf(&b, " from %s", untrusted.Name(f.OldPath))
		}
		fmt.Fprintf(&b, ", +%d -%d", f.Additions, f.Deletions)
		if f.SkipReason != "" {
			fmt.Fprintf(&b, ", not reviewed: %s", f.SkipReason)
		}
		b.WriteString(")\n")
	}
	return fmt.Sprintf("\nEvery file this change touches (%d; only the diffs above are shown to you, "+
		"report findings only on those files):\n%s", len(all), fence.Wrap("files of the change", b.String()))
}

// quoteWindow is how far from the cited lines a quote may be found.
const quoteWindow = 10

func headLines(files []review.File, path string) []string {
	for _, f := range files {
		if f.Path == path && f.Content != nil {
			return source.Split(*f.Content)
		}
	}
	return nil
}

// checkedQuote keeps the model's quote only when it is the head version's
// code at or near the cited lines (whitespace-insensitive): the report
// never shows code that is not there.
func checkedQuote(quote string, head []string, start, end int) string {
	q := strings.Join(strings.Fields(quote), " ")
	if q == "" || head == nil {
		return ""
	}
	lo, hi := max(start-quoteWindow, 1), min(end+quoteWindow, len(head))
	if lo > hi {
		return ""
	}
	if !strings.Contains(strings.Join(strings.Fields(strings.Join(head[lo-1:hi], "\n")), " "), q) {
		return ""
	}
	return strings.Trim(quote, "\n")
}

// checkedFix keeps a proposed fix only when it is a unified diff that
// applies to the head version.
func checkedFix(fix string, head []string) string {
	if strings.TrimSpace(fix) == "" || head == nil {
		return ""
	}
	hunks, err := diff.ParseFix(fix)
	if err != nil || !diff.Applies(hunks, head) {
		return ""
	}
	return strings.TrimRight(fix, "\n") + "\n"
}
