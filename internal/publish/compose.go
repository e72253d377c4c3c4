package publish

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/feedback"
	"github.com/reviewfleet/reviewfleet/internal/render"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Marker is the hidden line that identifies reviewfleet's review of a
// pull request at a head commit, so a re-run finds it even when the
// database forgot it.
func Marker(headSHA string) string { return "<!-- reviewfleet:" + headSHA + " -->" }

// Inline is an inline comment to post.
type Inline struct {
	Path        string
	Start, Line int // Start == Line for a one-line comment
	Body        string
	Fingerprint string
}

// Plan is what a review of a pull request posts: inline comments on
// commentable lines, and the findings that could not be anchored (or were
// found after the review was posted) listed in the body.
type Plan struct {
	Inline []Inline
	// InBody are findings shown in the body with their location.
	InBody []render.Finding
	// Kept counts findings this same GitHub review already comments on
	// (posting again); AlreadyPosted those commented on by an earlier
	// review of the pull request (an earlier push).
	Kept, AlreadyPosted int
	// Threads maps a fingerprint to the address of the bot's earlier
	// inline comment on it: a resolved finding links to its thread.
	Threads map[string]string
	// Dismissed are findings the repository dismissed before on the same
	// code: reported, not posted again; the summary counts them.
	Dismissed []render.Finding
}

// MakePlan places each reported finding: inline where the diff allows,
// in the body otherwise; findings whose fingerprint is in own (comments of
// the review being updated) or earlier (comments of earlier reviews) are
// not commented again. inlineAllowed false puts every new finding in the body (the
// pull request's head moved past the reviewed commit, or the review
// exists already and takes no new comments).
func MakePlan(findings []render.Finding, anchors Anchors, own, earlier map[string]bool, inlineAllowed bool) Plan {
	var p Plan
	for _, f := range findings {
		fp := render.Fingerprint(f.Finding)
		if own[fp] {
			p.Kept++
			continue
		}
		if earlier[fp] {
			p.AlreadyPosted++
			continue
		}
		file := cleanPath(f.File)
		from, to, ok := 0, 0, false
		if inlineAllowed {
			from, to, ok = anchors.Range(file, f.LineStart, f.LineEnd)
		}
		if !ok {
			p.InBody = append(p.InBody, f)
			continue
		}
		body := commentBody(f.Finding)
		if sFrom, sTo, text, okS := suggestion(f.Finding, anchors, file); okS {
			from, to = sFrom, sTo
			body += "\n```suggestion\n" + text + "```\n"
		} else if fix := strings.TrimRight(f.Fix, "\n"); fix != "" {
			body += "\n" + fence(fix) + "diff\n" + fix + "\n" + fence(fix) + "\n"
		}
		p.Inline = append(p.Inline, Inline{Path: file, Start: from, Line: to, Body: body + "\n" + feedback.FindingMarker(fp), Fingerprint: fp})
	}
	return p
}

// suggestion turns a finding's fix into a suggestion when it is one
// contiguous replacement whose replaced lines are commentable in one hunk
// and touch the finding's lines. It returns the lines to comment on and
// the replacement text (each line ending in a newline).
func suggestion(f review.Finding, anchors Anchors, file string) (from, to int, text string, ok bool) {
	if strings.TrimSpace(f.Fix) == "" {
		return 0, 0, "", false
	}
	hunks, err := diff.ParseFix(f.Fix)
	if err != nil || len(hunks) != 1 || len(hunks[0].Old) == 0 {
		return 0, 0, "", false
	}
	h := hunks[0]
	from, to = h.OldStart, h.OldStart+len(h.Old)-1
	if a, b, ok := anchors.Range(file, from, to); !ok || a != from || b != to {
		return 0, 0, "", false
	}
	s, e := f.LineStart, f.LineEnd
	if s > e {
		s, e = e, s
	}
	if e < from || s > to {
		return 0, 0, "", false
	}
	for _, l := range h.New {
		if strings.Contains(l, "```") {
			return 0, 0, "", false
		}
		text += l + "\n"
	}
	return from, to, text, true
}

func fence(s string) string {
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f
}

func cleanPath(p string) string {
	p = strings.TrimLeft(path.Clean(strings.ReplaceAll(strings.TrimSpace(p), `\`, "/")), "/")
	if p == "." {
		return ""
	}
	return p
}

// commentBody is a finding as an inline comment: severity, risk type,
// description and suggestion.
func commentBody(f review.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** · %s\n\n%s\n", f.Severity, f.RiskType, strings.TrimSpace(f.Description))
	if s := strings.TrimSpace(f.Suggestion); s != "" {
		fmt.Fprintf(&b, "\n%s\n", s)
	}
	return b.String()
}

// location is file:line or file:start-end.
func location(f review.Finding) string {
	s, e := f.LineStart, f.LineEnd
	if s > e {
		s, e = e, s
	}
	switch {
	case s <= 0:
		return f.File
	case s == e:
		return fmt.Sprintf("%s:%d", f.File, s)
	}
	return fmt.Sprintf("%s:%d-%d", f.File, s, e)
}

// Summary is the review's body: the marker, counts by severity, failed
// items, cost, and the findings placed in the body.
func Summary(rep *render.Report, headSHA string, p Plan, note string) string {
	var b strings.Builder
	b.WriteString(Marker(headSHA) + "\n")
	b.WriteString("### reviewfleet review\n\n")
	counts := map[review.Severity]int{}
	for _, f := range rep.Findings {
		counts[f.Severity]++
	}
	var parts []string
	for _, s := range []review.Severity{review.Critical, review.High, review.Medium, review.Low, review.Info} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	fmt.Fprintf(&b, "**%d findings** (%s) on `%s`.", len(rep.Findings), strings.Join(parts, ", "), short(headSHA))
	fmt.Fprintf(&b, " Inline comments: %d; in this summary: %d", len(p.Inline)+p.Kept, len(p.InBody))
	if p.AlreadyPosted > 0 {
		fmt.Fprintf(&b, "; already commented on an earlier push: %d", p.AlreadyPosted)
	}
	if n := len(p.Dismissed); n > 0 {
		fmt.Fprintf(&b, "; not posted again, dismissed earlier in this repository: %d (`reviewfleet learnings list`)", n)
	}
	b.WriteString(".\n\n")
	if rep.Status == render.StatusFailed {
		fmt.Fprintf(&b, "**The review failed:** %s\n\n", publicError(rep.Error))
	}
	if n := len(rep.FailedItems); n > 0 {
		fmt.Fprintf(&b, "**%d items could not be reviewed**, so the findings may not cover the whole change:\n", n)
		for i, it := range rep.FailedItems {
			if i == 10 {
				fmt.Fprintf(&b, "- … and %d more\n", n-10)
				break
			}
			fmt.Fprintf(&b, "- %s `%s`: %s\n", it.Stage, it.ItemKey, publicError(it.Error))
		}
		b.WriteString("\n")
	}
	if len(rep.ConfigWarnings) > 0 {
		b.WriteString("**Invalid repository configuration**, ignored (the review used the defaults for it):\n")
		for _, w := range rep.ConfigWarnings {
			loc := w.File
			if w.Line > 0 {
				loc = fmt.Sprintf("%s:%d", w.File, w.Line)
			}
			fmt.Fprintf(&b, "- `%s`: %s\n", loc, oneLine(w.Message))
		}
		b.WriteString("\n")
	}
	writeResolved(&b, rep.Resolved, p.Threads)
	fmt.Fprintf(&b, "Cost: $%.4f over %d LLM calls.\n", rep.Usage.Cost, rep.Usage.LLMCalls)
	if note != "" {
		fmt.Fprintf(&b, "\n%s\n", note)
	}
	if len(p.InBody) > 0 {
		b.WriteString("\n#### Findings outside the commentable lines of the diff\n\n")
		for _, f := range p.InBody {
			fmt.Fprintf(&b, "- **%s** · %s · `%s`: %s", f.Severity, f.RiskType, location(f.Finding), oneLine(f.Description))
			if s := strings.TrimSpace(f.Suggestion); s != "" {
				fmt.Fprintf(&b, " — %s", oneLine(s))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// maxResolvedListed bounds the resolved findings a summary lists.
const maxResolvedListed = 20

// writeResolved lists the findings of the previous review this one no
// longer reports, each linked to the thread of its earlier inline comment
// when there is one.
func writeResolved(b *strings.Builder, resolved []render.Finding, threads map[string]string) {
	if len(resolved) == 0 {
		return
	}
	fmt.Fprintf(b, "Resolved since the previous review: %d finding(s).\n", len(resolved))
	for i, f := range resolved {
		if i == maxResolvedListed {
			fmt.Fprintf(b, "- … and %d more\n", len(resolved)-maxResolvedListed)
			break
		}
		fmt.Fprintf(b, "- ~~`%s`~~ · %s: %s", location(f.Finding), f.RiskType, oneLine(f.Description))
		if u := threads[render.Fingerprint(f.Finding)]; u != "" {
			fmt.Fprintf(b, " ([comment](%s))", u)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// internalAddress matches what an error may say about the fleet's own
// network: URLs (the model endpoint, the database) and host:port pairs.
var internalAddress = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"')]+|\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\[[0-9a-fA-F:]+\](?::\d+)?`)

// publicError is an error as it may be shown on a pull request: one line,
// at most 300 characters, with addresses of the fleet's own services
// replaced (the full text stays in the stored report).
func publicError(s string) string {
	s = internalAddress.ReplaceAllString(oneLine(s), "<address>")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}
