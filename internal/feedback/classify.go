// Package feedback listens to the people who read the fleet's posted
// reviews: it reads the reactions and replies on the bot's inline
// comments and each pull request's fate (merged, and whether each
// finding's lines changed before), classifies them by simple rules, and
// stores them (finding_feedback). From the dismissals it derives what the
// fleet learned per repository: a dismissed finding is not posted there
// again while its code reads the same, and findings like it get a lower
// confidence — visibly, in the report, and reversibly (learnings disable).
package feedback

import (
	"regexp"
	"strings"

	"github.com/reviewfleet/reviewfleet/store"
)

// Reply classes: what a reply in the bot's thread says.
const (
	ClassFalsePositive = "false_positive"
	ClassWontFix       = "wont_fix"
	ClassFixed         = "fixed"
	ClassAgreed        = "agreed"
	ClassQuestion      = "question"
	ClassOther         = "other"
)

// replyRules are tried in order; the first whose pattern matches a line
// of the reply (quoted lines left out) classes it. A rule's phrase
// preceded by "not"/"isn't"/"no" within two words does not count.
var replyRules = []struct {
	class string
	re    *regexp.Regexp
}{
	{ClassFalsePositive, regexp.MustCompile(`\b(false[ -]positives?|false alarm|not (a|an|really a) (real )?(bug|issue|problem)|not applicable|works as (intended|designed)|by design|this is (fine|intended|wrong|incorrect)|incorrect finding|wrong finding|hallucinat\w*)\b`)},
	{ClassWontFix, regexp.MustCompile(`\b(won'?t fix|wontfix|will not fix|not going to fix|not worth (it|fixing)|out of scope|acceptable risk|leave it as is)\b`)},
	{ClassFixed, regexp.MustCompile(`\b(fixed|addressed|resolved in|done in|changed in|updated in)\b|^\s*done\b`)},
	{ClassAgreed, regexp.MustCompile(`\b(good catch|nice catch|good point|agreed|you'?re right|thanks,? will fix|will fix)\b`)},
}

var negation = regexp.MustCompile(`\b(not|isn'?t|wasn'?t|no|never)\s+(\w+\s+){0,1}$`)

// ClassifyReply classes a reply to one of the bot's inline comments.
func ClassifyReply(body string) string {
	var lines []string
	for _, l := range strings.Split(strings.ToLower(body), "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, ">") {
			lines = append(lines, strings.ReplaceAll(t, "’", "'"))
		}
	}
	text := strings.Join(lines, "\n")
	for _, r := range replyRules {
		for _, m := range r.re.FindAllStringIndex(text, -1) {
			if !negation.MatchString(text[:m[0]]) {
				return r.class
			}
		}
	}
	if strings.Contains(text, "?") {
		return ClassQuestion
	}
	return ClassOther
}

// ReplySignal is what a reply class means for the finding.
func ReplySignal(class string) string {
	switch class {
	case ClassFalsePositive, ClassWontFix:
		return store.SignalDismiss
	case ClassFixed:
		return store.SignalFixed
	case ClassAgreed:
		return store.SignalAcknowledge
	case ClassQuestion:
		return store.SignalQuestion
	}
	return store.SignalNeutral
}

// ReactionSignal is what a reaction means: 👎 dismisses, 👍 ❤️ 🎉 🚀
// acknowledge, the rest (😄 😕 👀) say nothing about the finding.
func ReactionSignal(content string) string {
	switch content {
	case "-1":
		return store.SignalDismiss
	case "+1", "heart", "hooray", "rocket":
		return store.SignalAcknowledge
	case "confused":
		return store.SignalQuestion
	}
	return store.SignalNeutral
}
