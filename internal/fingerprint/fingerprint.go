// Package fingerprint gives a finding an identity that survives a new push:
// the same problem in the same place keeps the same fingerprint when lines
// move around it or the model rewords its punctuation, so a finding already
// posted is not posted again and one that disappears can be marked resolved.
//
// A fingerprint is built from four parts:
//
//   - the file path (cleaned, forward slashes);
//   - the enclosing symbol (function, method or type the finding sits in,
//     see Symbol), empty at file level;
//   - the risk type, lowercased;
//   - the claim normalised by NormaliseClaim.
//
// Line numbers take no part in it, neither directly nor inside the claim.
package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"regexp"
	"strings"
	"unicode"
)

// version is mixed into every fingerprint so that a change of the
// normalisation rules yields new fingerprints instead of false matches.
const version = "fp1"

// Of returns the fingerprint of a finding: 32 lowercase hex digits.
func Of(filePath, symbol, riskType, claim string) string {
	h := sha256.New()
	for _, part := range []string{
		version,
		cleanPath(filePath),
		strings.TrimSpace(symbol),
		strings.ToLower(strings.TrimSpace(riskType)),
		NormaliseClaim(claim),
	} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func cleanPath(p string) string {
	p = strings.ReplaceAll(strings.TrimSpace(p), `\`, "/")
	if p == "" {
		return ""
	}
	return strings.TrimPrefix(path.Clean(p), "./")
}

var (
	// "line 12", "lines 12-14", "line 12 to 14", "l12", "L12-L14", "ln 7".
	lineRef = regexp.MustCompile(`(?i)\b(?:lines?|ln|l)\s*\.?\s*#?\d+(?:\s*(?:-|–|to|and|,)\s*l?\d+)*\b`)
	// "file.go:12" or "file.go:12:5": keep the file, drop the position.
	posRef = regexp.MustCompile(`(\w):\d+(?::\d+)?\b`)
	// Quote characters of every kind, backticks included: the text inside
	// them (often an identifier) stays, the quoting does not.
	quotes = strings.NewReplacer("`", "", `"`, "", "'", "", "\u2018", "", "\u2019", "", "\u201c", "", "\u201d", "")
)

// NormaliseClaim reduces a finding's claim (its description) to the words
// that identify it:
//
//   - lowercase;
//   - references to line numbers ("line 12", "lines 3-5", "L7", "x.go:12")
//     removed, because they change whenever code above the finding moves;
//   - quote characters (', ", `, typographic quotes) removed, the quoted
//     text kept: identifiers in backticks distinguish two findings in the
//     same function, so they stay;
//   - punctuation other than what identifiers and expressions use
//     (_ . ( ) [ ] < > = ! & | * + - /) turned into spaces;
//   - runs of whitespace collapsed to one space, ends trimmed.
func NormaliseClaim(claim string) string {
	s := strings.ToLower(claim)
	s = lineRef.ReplaceAllString(s, " ")
	s = posRef.ReplaceAllString(s, "$1")
	s = quotes.Replace(s)
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r):
			return r
		case strings.ContainsRune("_.()[]<>=!&|*+-/", r):
			return r
		}
		return ' '
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	return strings.TrimRight(s, ". ")
}
