package feedback

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/fingerprint"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/source"
	"github.com/reviewfleet/reviewfleet/store"
)

// SimilarFactor is what each dismissed finding of the same kind multiplies
// a new finding's confidence by; at most MaxSimilar of them count.
const (
	SimilarFactor = 0.85
	MaxSimilar    = 3
)

// CodeHash identifies lines start..end of content as they read, spaces
// collapsed: the same code moved to other lines keeps its hash, an edited
// line changes it. It is "" when the lines are not in content.
func CodeHash(content string, start, end int) string {
	if start > end {
		start, end = end, start
	}
	lines := source.Split(content)
	if start < 1 || end > len(lines) {
		return ""
	}
	h := sha256.New()
	for _, l := range lines[start-1 : end] {
		h.Write([]byte(strings.Join(strings.Fields(l), " ")))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// KindKey identifies a finding's kind in a repository: its risk type,
// normalised claim and enclosing symbol, but not its file.
func KindKey(riskType, claim, symbol string) string {
	return fingerprint.Of("", symbol, riskType, claim)
}

// Describe fills in a finding's CodeHash and KindKey from the head
// content of its file ("" when the review does not hold it).
func Describe(f *render.Finding, content string) {
	if content == "" {
		f.KindKey = KindKey(string(f.RiskType), f.Description, "")
		return
	}
	f.CodeHash = CodeHash(content, f.LineStart, f.LineEnd)
	f.KindKey = KindKey(string(f.RiskType), f.Description, fingerprint.Symbol(f.File, content, f.LineStart))
}

// dismissedAs returns the enabled learning that dismissed this very
// finding on this very code, if any.
func dismissedAs(f render.Finding, learnings []store.Learning) (store.Learning, bool) {
	fp := render.Fingerprint(f.Finding)
	for _, l := range learnings {
		if !l.Disabled && l.Fingerprint == fp && slices.Contains(l.CodeHashes, f.CodeHash) {
			return l, true
		}
	}
	return store.Learning{}, false
}

// MarkDismissed marks the findings a repository dismissed before on the
// same code (Learned.Dismissed): they stay in the report and are not
// posted again. It returns how many it marked anew.
func MarkDismissed(findings []render.Finding, learnings []store.Learning) int {
	n := 0
	for i := range findings {
		f := &findings[i]
		if f.Learned != nil && f.Learned.Dismissed {
			continue
		}
		l, ok := dismissedAs(*f, learnings)
		if !ok {
			continue
		}
		if f.Learned == nil {
			f.Learned = &render.Learned{ConfidenceBefore: f.Confidence}
		}
		f.Learned.Dismissed, f.Learned.Learning = true, l.Fingerprint
		f.Learned.Note = fmt.Sprintf("dismissed %s in this repository on the same code (learning %s, %s): not posted again",
			times(l.Dismissals), short(l.Fingerprint), l.RiskType)
		n++
	}
	return n
}

// Apply is what a repository's learnings do to a review's findings:
// those dismissed before on the same code are marked (MarkDismissed); the
// others of a kind dismissed before lose confidence, SimilarFactor per
// dismissed finding of the kind (at most MaxSimilar), and say so.
// Disabled learnings do nothing.
func Apply(findings []render.Finding, learnings []store.Learning) {
	MarkDismissed(findings, learnings)
	for i := range findings {
		f := &findings[i]
		if f.Learned != nil || f.KindKey == "" {
			continue
		}
		var similar []store.Learning
		for _, l := range learnings {
			if !l.Disabled && l.KindKey == f.KindKey {
				similar = append(similar, l)
			}
		}
		if len(similar) == 0 {
			continue
		}
		n := min(len(similar), MaxSimilar)
		before := f.Confidence
		f.Confidence = math.Round(before*math.Pow(SimilarFactor, float64(n))*1000) / 1000
		f.Learned = &render.Learned{Similar: len(similar), ConfidenceBefore: before, Learning: similar[0].Fingerprint,
			Note: fmt.Sprintf("confidence lowered from %.2f to %.2f: %d similar finding(s) (%s, same claim and symbol) were dismissed in this repository (learning %s)",
				before, f.Confidence, len(similar), f.RiskType, short(similar[0].Fingerprint))}
	}
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

func short(fp string) string {
	if len(fp) > 12 {
		return fp[:12]
	}
	return fp
}
