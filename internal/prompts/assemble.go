package prompts

import (
	"slices"
	"strconv"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// partSeparator joins the parts of an assembled prompt.
const partSeparator = "\n\n"

// IntentSystem returns the intent system prompt for one file: the core
// instructions followed by the selected pattern packs (progressive context).
// Packs are deduplicated and put in canonical order whatever their input
// order, so equal selections give byte-identical prompts. Unknown packs are
// ignored; an empty selection gives the core alone, which is what
// DetectPacks selects for a change without code (pass AllPacks for every
// pack).
func (s *Set) IntentSystem(packs []Pack) string {
	return s.join(append([]string{s.files[fileIntentCore]}, s.packTexts(packs)...))
}

// IntentSystemFull returns the fixed intent prompt: the core instructions
// with every pattern pack. It is the prompt used when progressive context is
// switched off, and the baseline that Stats measures against.
func (s *Set) IntentSystemFull() string {
	return s.full
}

// IntentChunkedSystem returns the system prompt for chunked intent, where
// one call covers several files given as diffs only: the core instructions,
// the chunked-mode rules, then the packs. Pass the union of the packs the
// chunk's files need; an empty selection adds no pack.
func (s *Set) IntentChunkedSystem(packs []Pack) string {
	return s.join(append([]string{s.files[fileIntentCore], s.files[fileIntentChunked]}, s.packTexts(packs)...))
}

// FloorPlaceholder in the verify prompt is replaced by the configured
// confidence floor (harness.verify_confidence_floor), so the prompt never
// states a number the pipeline does not apply.
const FloorPlaceholder = "{{floor}}"

// VerifySystem returns the system prompt of the verify stage, with the
// confidence floor of unanchored findings filled in.
func (s *Set) VerifySystem(floor float64) string {
	return strings.ReplaceAll(s.files[fileVerify], FloorPlaceholder, strconv.FormatFloat(floor, 'f', -1, 64))
}

// ExpertSystem returns the expert system prompt for a finding of the given
// risk type: the common instructions, the focus paragraph of the risk type
// (if it has one) and the named references (see References and
// DetectReferences) in sorted order. Unknown reference names are ignored.
func (s *Set) ExpertSystem(risk review.RiskType, refs []string) string {
	parts := []string{s.files[fileExpert]}
	if focus, ok := s.files[focusFile(risk)]; ok {
		parts = append(parts, focus)
	}
	refs = slices.Clone(refs)
	slices.Sort(refs)
	for _, r := range slices.Compact(refs) {
		if text, ok := s.files[referenceFile(r)]; ok {
			parts = append(parts, text)
		}
	}
	return s.join(parts)
}

// EvalSystem returns the system prompt of the eval stage.
func (s *Set) EvalSystem() string {
	return s.files[fileEval]
}

// packTexts returns the texts of the selected packs in canonical order.
func (s *Set) packTexts(packs []Pack) []string {
	var texts []string
	for _, p := range AllPacks {
		if slices.Contains(packs, p) {
			texts = append(texts, s.files[packFile(p)])
		}
	}
	return texts
}

// join assembles prompt parts, separated by one blank line, ending with a
// newline.
func (s *Set) join(parts []string) string {
	return strings.Join(parts, partSeparator) + "\n"
}
