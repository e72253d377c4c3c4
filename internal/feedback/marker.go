package feedback

import "strings"

// markerOpen starts the hidden tag that names the finding an inline
// comment carries; the tag is how a comment read back from GitHub is
// matched to its finding.
const markerOpen = "<!-- reviewfleet:finding:"

// FindingMarker tags an inline comment with its finding's fingerprint.
func FindingMarker(fp string) string { return markerOpen + fp + " -->" }

// FingerprintIn returns the fingerprint tagged in a comment's body, or "".
func FingerprintIn(body string) string {
	i := strings.Index(body, markerOpen)
	if i < 0 {
		return ""
	}
	rest := body[i+len(markerOpen):]
	j := strings.Index(rest, " -->")
	if j < 0 {
		return ""
	}
	return rest[:j]
}
