package render

import (
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// writeFix shows a finding's proposed fix (a unified diff against the head
// version) as a diff block under its suggestion.
func writeFix(b *strings.Builder, fix string) {
	fix = strings.TrimRight(fix, "\n")
	if fix == "" {
		return
	}
	fence := "```"
	for strings.Contains(fix, fence) {
		fence += "`"
	}
	b.WriteString("**Suggested fix:**\n\n" + fence + "diff\n" + fix + "\n" + fence + "\n\n")
}

type sarifFix struct {
	Description     sarifMessage          `json:"description"`
	ArtifactChanges []sarifArtifactChange `json:"artifactChanges"`
}

type sarifArtifactChange struct {
	ArtifactLocation sarifArtifact      `json:"artifactLocation"`
	Replacements     []sarifReplacement `json:"replacements"`
}

type sarifReplacement struct {
	DeletedRegion   sarifRegion  `json:"deletedRegion"`
	InsertedContent sarifMessage `json:"insertedContent"`
}

// sarifFixes turns a finding's proposed fix into a SARIF fix: one
// replacement per hunk, the hunk's head lines replaced by its new lines.
func sarifFixes(f review.Finding) []sarifFix {
	if strings.TrimSpace(f.Fix) == "" {
		return nil
	}
	hunks, err := diff.ParseFix(f.Fix)
	if err != nil {
		return nil
	}
	var reps []sarifReplacement
	for _, h := range hunks {
		if len(h.Old) == 0 {
			continue // an insertion without context has no region to replace
		}
		// A region of whole lines ends before the last line's newline.
		text := strings.Join(h.New, "\n")
		reps = append(reps, sarifReplacement{
			DeletedRegion:   sarifRegion{StartLine: h.OldStart, EndLine: h.OldStart + len(h.Old) - 1},
			InsertedContent: sarifMessage{Text: text},
		})
	}
	if len(reps) == 0 {
		return nil
	}
	return []sarifFix{{
		Description:     sarifMessage{Text: "Proposed fix"},
		ArtifactChanges: []sarifArtifactChange{{ArtifactLocation: sarifArtifact{URI: artifactURI(f.File), URIBaseID: srcRoot}, Replacements: reps}},
	}}
}
