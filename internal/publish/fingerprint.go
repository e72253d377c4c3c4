package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
	"unicode"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Fingerprint is a finding's stable identity across pushes and reviews:
// its file, risk type and description once case, punctuation and spacing
// are ignored — not its line numbers, which move when code above changes.
// Posting keys inline comments by it so a finding already commented on is
// not commented on again. This is the one place that computes it: a
// project-wide fingerprint (one that also knows the enclosing symbol) can
// replace the body of this function.
func Fingerprint(f review.Finding) string {
	p := strings.TrimLeft(path.Clean(strings.ReplaceAll(strings.TrimSpace(f.File), `\`, "/")), "/")
	words := strings.FieldsFunc(strings.ToLower(f.Description), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
	sum := sha256.Sum256([]byte(p + "\x00" + string(f.RiskType) + "\x00" + strings.Join(words, " ")))
	return hex.EncodeToString(sum[:8])
}
