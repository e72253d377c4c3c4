package render

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Markdown renders the report for people: a title with the repository and
// base..head, the review's facts, a summary (findings by risk type and
// severity, eval-gate verdicts, LLM usage), the reported findings grouped by
// file with their code, verdict trail and expert run, and then the files not
// reviewed, failed items, findings below the threshold and findings dropped
// by triage. User text is escaped where it could break the layout. A nil
// report renders as an empty string.
func Markdown(r *Report) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	writeHeader(&b, r)
	writeConfigWarnings(&b, r)
	writeSummary(&b, r)
	writeFindings(&b, r)
	writeResolved(&b, r)
	writeNotReviewed(&b, r)
	writeBelow(&b, r)
	writeDropped(&b, r)
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func writeHeader(b *strings.Builder, r *Report) {
	repo := r.Repo
	if repo == "" {
		repo = "repository"
	}
	fmt.Fprintf(b, "# Review of %s: %s\n\n", inline(repo), inline(changeName(r)))
	writeOutcome(b, r)

	if r.Status != "" {
		fmt.Fprintf(b, "- **Status:** %s\n", inline(r.Status))
	}
	if r.ReviewID != "" {
		fmt.Fprintf(b, "- **Review:** %s\n", codeSpan(r.ReviewID))
	}
	if r.BaseSHA != "" || r.HeadSHA != "" {
		fmt.Fprintf(b, "- **Commits:** %s..%s\n", codeSpan(shortSHA(r.BaseSHA)), codeSpan(shortSHA(r.HeadSHA)))
	}
	if !r.CreatedAt.IsZero() {
		fmt.Fprintf(b, "- **Started:** %s", r.CreatedAt.UTC().Format(time.RFC3339))
		if !r.FinishedAt.IsZero() {
			fmt.Fprintf(b, " · **Finished:** %s (took %s)", r.FinishedAt.UTC().Format(time.RFC3339),
				tookLabel(r.FinishedAt.Sub(r.CreatedAt)))
		}
		b.WriteString("\n")
	}
	if r.IntentMode != "" {
		fmt.Fprintf(b, "- **Intent mode:** %s\n", inline(r.IntentMode))
	}
	fmt.Fprintf(b, "- **Confidence threshold:** %.2f\n", r.Threshold)
	for _, c := range r.Calibrated {
		fmt.Fprintf(b, "- **Calibrated threshold for %s:** %.2f (%s)\n", inline(c.RiskType), c.Threshold, inline(c.Reason))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(b, "\n> **Note:** %s\n", inline(n))
	}
	if len(r.SkippedStages) > 0 {
		names := make([]string, len(r.SkippedStages))
		for i, s := range r.SkippedStages {
			names[i] = inline(s)
		}
		fmt.Fprintf(b, "\n> **Note:** skipped by configuration: %s. Findings did not go through these stages.\n", strings.Join(names, ", "))
	}
	b.WriteString("\n")
}

// maxOutcomeItems is how many failed items the headline lists; the
// "Failed items" table has them all.
const maxOutcomeItems = 10

// writeOutcome puts what went wrong first: a failed review's reason, or
// how many items an incomplete review could not review, and why.
func writeOutcome(b *strings.Builder, r *Report) {
	if r.Interrupted {
		writeInterrupted(b, r)
		return
	}
	if r.Status == StatusFailed {
		fmt.Fprintf(b, "> **FAILED:** %s\n", inline(orDash(r.Error)))
		stage := ""
		if r.StoppedAt != "" {
			stage = " during the " + inline(r.StoppedAt) + " stage"
		}
		fmt.Fprintf(b, ">\n> The review stopped%s. It is partial: the findings below did not go through every stage, and what did not run is listed here.\n>\n", stage)
		writeNotRun(b, r)
		b.WriteString("\n")
		return
	}
	if r.Error != "" {
		fmt.Fprintf(b, "> **Error:** %s\n\n", inline(r.Error))
	}
	if !r.Incomplete() {
		return
	}
	fmt.Fprintf(b, "> **INCOMPLETE:** %s could not be reviewed; the findings below do not cover them.\n>\n",
		plural(len(r.FailedItems), "item"))
	for i, f := range r.FailedItems {
		if i == maxOutcomeItems {
			fmt.Fprintf(b, "> - … and %d more (see Failed items)\n", len(r.FailedItems)-i)
			break
		}
		fmt.Fprintf(b, "> - %s %s: %s\n", inline(f.Stage), codeSpan(f.ItemKey), inline(truncate(oneLine(f.Error), 300)))
	}
	b.WriteString("\n")
}

// writeInterrupted says that the review stopped part-way and what did not
// run, so that nothing below reads as a complete review.
func writeInterrupted(b *strings.Builder, r *Report) {
	stage := ""
	if r.StoppedAt != "" {
		stage = " during the " + inline(r.StoppedAt) + " stage"
	}
	fmt.Fprintf(b, "> **INTERRUPTED:** the review was stopped%s before it finished. It is partial: the findings below did not go through every stage, and what did not run is listed here.\n>\n", stage)
	writeNotRun(b, r)
	b.WriteString("\n")
}

// writeNotRun lists what a review that stopped did not run: the items not
// finished (with what last held each back), the failed ones, the stages
// never reached.
func writeNotRun(b *strings.Builder, r *Report) {
	if len(r.NotRun) > 0 {
		fmt.Fprintf(b, "> - did not run: %s\n", plural(len(r.NotRun), "item"))
		for i, it := range r.NotRun {
			if i == maxOutcomeItems {
				fmt.Fprintf(b, ">   - … and %d more\n", len(r.NotRun)-i)
				break
			}
			if it.Error != "" {
				fmt.Fprintf(b, ">   - %s %s: %s\n", inline(it.Stage), codeSpan(it.ItemKey), inline(truncate(oneLine(it.Error), 300)))
				continue
			}
			fmt.Fprintf(b, ">   - %s %s\n", inline(it.Stage), codeSpan(it.ItemKey))
		}
	}
	if len(r.FailedItems) > 0 {
		fmt.Fprintf(b, "> - failed: %s (see Failed items)\n", plural(len(r.FailedItems), "item"))
	}
	if len(r.StagesNotRun) > 0 {
		names := make([]string, len(r.StagesNotRun))
		for i, s := range r.StagesNotRun {
			names[i] = inline(s)
		}
		fmt.Fprintf(b, "> - stages never reached: %s\n", strings.Join(names, ", "))
	}
}

func writeSummary(b *strings.Builder, r *Report) {
	b.WriteString("## Summary\n\n")
	if r.Status == StatusFailed {
		// Nothing here may read as a finished review's tally.
		stage := ""
		if r.StoppedAt != "" {
			stage = " during the " + inline(r.StoppedAt) + " stage"
		}
		fmt.Fprintf(b, "The review FAILED%s: %s so far (not through every stage), %s, %s not finished, stages never reached: %s.\n\n",
			stage, plural(len(r.Findings), "finding"), plural(len(r.FailedItems), "failed item"), plural(len(r.NotRun), "item"),
			cmp.Or(strings.Join(r.StagesNotRun, ", "), "none"))
	} else {
		fmt.Fprintf(b, "%s reported, %d below threshold, %d dropped by triage, %s not reviewed, %s.\n\n",
			plural(len(r.Findings), "finding"), len(r.BelowThreshold), len(r.Dropped),
			plural(len(r.NotReviewed), "file"), plural(len(r.FailedItems), "failed item"))
	}

	if len(r.Findings) > 0 {
		types := make(map[review.RiskType]bool)
		counts := make(map[review.RiskType]map[review.Severity]int)
		var unknownSeverity bool
		for _, f := range r.Findings {
			types[f.RiskType] = true
			if counts[f.RiskType] == nil {
				counts[f.RiskType] = make(map[review.Severity]int)
			}
			counts[f.RiskType][f.Severity]++
			unknownSeverity = unknownSeverity || f.Severity.Rank() == len(review.Severities)
		}
		b.WriteString("| Risk type |")
		for _, s := range review.Severities {
			fmt.Fprintf(b, " %s |", s)
		}
		if unknownSeverity {
			b.WriteString(" other |")
		}
		b.WriteString(" Total |\n|---|")
		b.WriteString(strings.Repeat("--:|", len(review.Severities)+1))
		if unknownSeverity {
			b.WriteString("--:|")
		}
		b.WriteString("\n")
		totals := make(map[review.Severity]int)
		otherTotal := 0
		for _, rt := range riskTypesInOrder(types) {
			fmt.Fprintf(b, "| %s |", cell(string(rt)))
			sum := 0
			for _, s := range review.Severities {
				n := counts[rt][s]
				totals[s] += n
				sum += n
				fmt.Fprintf(b, " %d |", n)
			}
			if unknownSeverity {
				other := 0
				for s, n := range counts[rt] {
					if s.Rank() == len(review.Severities) {
						other += n
					}
				}
				otherTotal += other
				sum += other
				fmt.Fprintf(b, " %d |", other)
			}
			fmt.Fprintf(b, " %d |\n", sum)
		}
		b.WriteString("| **Total** |")
		for _, s := range review.Severities {
			fmt.Fprintf(b, " %d |", totals[s])
		}
		if unknownSeverity {
			fmt.Fprintf(b, " %d |", otherTotal)
		}
		fmt.Fprintf(b, " %d |\n\n", len(r.Findings))
	}

	b.WriteString("### Eval gate\n\n")
	switch {
	case skipped(r, review.StageEval):
		b.WriteString("Skipped by configuration.\n\n")
	case len(r.EvalSummary) == 0:
		b.WriteString("No findings reached the eval gate.\n\n")
	default:
		types := make(map[review.RiskType]bool)
		for rt := range r.EvalSummary {
			types[rt] = true
		}
		b.WriteString("| Risk type | Confirmed | Disputed | Uncertain |\n|---|--:|--:|--:|\n")
		for _, rt := range riskTypesInOrder(types) {
			c := r.EvalSummary[rt]
			fmt.Fprintf(b, "| %s | %d | %d | %d |\n", cell(string(rt)), c.Confirmed, c.Disputed, c.Uncertain)
		}
		b.WriteString("\n")
	}

	b.WriteString("### LLM usage\n\n| LLM calls | Tokens in | Tokens out |\n|--:|--:|--:|\n")
	fmt.Fprintf(b, "| %s | %s | %s |\n\n", thousands(r.Usage.LLMCalls), thousands(r.Usage.TokensIn), thousands(r.Usage.TokensOut))
	if r.Usage.Cost > 0 {
		fmt.Fprintf(b, "Estimated cost: $%.4f (llm.prices).\n\n", r.Usage.Cost)
	}
}

func writeFindings(b *strings.Builder, r *Report) {
	findings := r.Findings
	b.WriteString("## Findings\n\n")
	if r.Status == StatusFailed && len(findings) > 0 {
		b.WriteString("_The review failed: each finding says the stage it stopped at and the stages that never judged it._\n\n")
	}
	if len(findings) == 0 {
		b.WriteString("No findings at or above the confidence threshold.\n\n")
		return
	}
	// Group by file, files in the order their first finding appears, so the
	// file with the worst finding comes first.
	var files []string
	byFile := make(map[string][]int)
	for i, f := range findings {
		if _, ok := byFile[f.File]; !ok {
			files = append(files, f.File)
		}
		byFile[f.File] = append(byFile[f.File], i)
	}
	for _, file := range files {
		fmt.Fprintf(b, "### %s\n\n", fileLabel(file))
		for _, i := range byFile[file] {
			writeFinding(b, i+1, findings[i])
		}
	}
}

func writeFinding(b *strings.Builder, n int, f Finding) {
	start, end := lineRange(f.Finding)
	fmt.Fprintf(b, "#### %d. %s · %s · %s\n\n", n, strings.ToUpper(inline(string(f.Severity))), inline(string(f.RiskType)), linesLabel(start, end))
	fmt.Fprintf(b, "Confidence **%.2f**\n\n", f.Confidence)
	if l := f.Learned; l != nil && l.Note != "" {
		fmt.Fprintf(b, "**Learned from feedback:** %s\n\n", inline(l.Note))
	}
	if f.StoppedAt != "" {
		fmt.Fprintf(b, "**Stopped at:** %s", inline(f.StoppedAt))
		if len(f.MissedStages) > 0 {
			fmt.Fprintf(b, " — %s did not judge it", inline(strings.Join(f.MissedStages, ", ")))
		}
		b.WriteString("\n\n")
	}
	if d := block(f.Description); d != "" {
		b.WriteString(d + "\n\n")
	}
	if s := block(f.Suggestion); s != "" {
		// On its own line so a suggestion that opens with a code fence
		// still forms a valid block.
		b.WriteString("**Suggestion:**\n" + s + "\n\n")
	}
	writeFix(b, f.Fix)
	if len(f.Code) > 0 {
		ex := capCode(f.Code)
		writeCode(b, ex.Lines, start, end)
		if note := cmp.Or(f.CodeNote, ex.note()); note != "" {
			fmt.Fprintf(b, "_Excerpt cut: %s._\n\n", inline(note))
		}
	}
	trail := orderedTrail(f.Trail)
	if len(trail) > 0 {
		steps := make([]string, len(trail))
		for i, v := range trail {
			steps[i] = trailStep(v)
		}
		b.WriteString("**Trail:** " + strings.Join(steps, " → ") + "\n\n")
		var notes []string
		for _, v := range trail {
			evidence := v.Evidence
			if f.Expert != nil && v.Stage == string(review.StageExpert) {
				evidence = nil // the expert's evidence is listed with its run below
			}
			if v.Reason == "" && len(evidence) == 0 {
				continue
			}
			label := inline(v.Stage)
			if v.Model != "" {
				label += " (" + inline(v.Model) + ")"
			}
			notes = append(notes, fmt.Sprintf("- %s: %s", label, inline(cmp.Or(v.Reason, v.Verdict, "—"))))
			for _, e := range evidence {
				if strings.TrimSpace(e) == strings.TrimSpace(v.Reason) {
					continue // the stage's reason is its evidence: say it once
				}
				notes = append(notes, "  - "+inline(e))
			}
		}
		if len(notes) > 0 {
			b.WriteString(strings.Join(notes, "\n") + "\n\n")
		}
	}
	if x := f.Expert; x != nil {
		fmt.Fprintf(b, "**Expert run:** stopped: %s · %s · %s\n\n", inline(orDash(stopReason(f))), plural(x.Rounds, "round"), plural(x.ToolCalls, "tool call"))
		for _, e := range x.Evidence {
			fmt.Fprintf(b, "- %s\n", inline(e))
		}
		if len(x.Evidence) > 0 {
			b.WriteString("\n")
		}
	}
}

// writeCode writes the cited lines in a fenced block with line numbers,
// marking the lines inside [start, end] with ">".
func writeCode(b *strings.Builder, code []CodeLine, start, end int) {
	width, longest := 1, 0
	for _, c := range code {
		width = max(width, len(strconv.Itoa(c.Line)))
		longest = max(longest, longestRun(c.Text, '`'))
	}
	fence := strings.Repeat("`", max(3, longest+1))
	b.WriteString(fence + "\n")
	for _, c := range code {
		mark := " "
		if c.Line >= start && c.Line <= end {
			mark = ">"
		}
		text := strings.TrimRight(strings.ReplaceAll(c.Text, "\n", " "), "\r")
		fmt.Fprintf(b, "%s %*d | %s\n", mark, width, c.Line, text)
	}
	b.WriteString(fence + "\n\n")
}

func trailStep(v Verdict) string {
	return fmt.Sprintf("%s: %s (%.2f→%.2f)", inline(v.Stage), inline(orDash(v.Verdict)), v.ConfidenceBefore, v.ConfidenceAfter)
}

func writeNotReviewed(b *strings.Builder, r *Report) {
	b.WriteString("## Not reviewed\n\n")
	if len(r.NotReviewed) == 0 && len(r.FailedItems) == 0 && len(r.NotRun) == 0 && len(r.StagesNotRun) == 0 {
		if r.Status == StatusFailed {
			b.WriteString("No file was skipped, but the review did not finish (see above).\n\n")
			return
		}
		b.WriteString("Every changed file was reviewed and every item completed.\n\n")
		return
	}
	if len(r.NotReviewed) > 0 {
		b.WriteString("| File | Reason |\n|---|---|\n")
		for _, n := range r.NotReviewed {
			fmt.Fprintf(b, "| %s | %s |\n", cellCode(n.Path), cell(n.Reason))
		}
		b.WriteString("\n")
	}
	if len(r.FailedItems) > 0 {
		b.WriteString("### Failed items\n\n| Stage | Item | Error |\n|---|---|---|\n")
		for _, f := range r.FailedItems {
			fmt.Fprintf(b, "| %s | %s | %s |\n", cell(f.Stage), cellCode(f.ItemKey), cell(f.Error))
		}
		b.WriteString("\n")
	}
	if len(r.NotRun) > 0 {
		b.WriteString("### Items not finished\n\n| Stage | Item | Last held back by |\n|---|---|---|\n")
		for _, f := range r.NotRun {
			fmt.Fprintf(b, "| %s | %s | %s |\n", cell(f.Stage), cellCode(f.ItemKey), cell(orDash(f.Error)))
		}
		b.WriteString("\n")
	}
	if len(r.StagesNotRun) > 0 {
		fmt.Fprintf(b, "Stages never reached: %s.\n\n", inline(strings.Join(r.StagesNotRun, ", ")))
	}
}

func writeBelow(b *strings.Builder, r *Report) {
	fmt.Fprintf(b, "## Below threshold\n\n")
	if len(r.BelowThreshold) == 0 {
		b.WriteString("None.\n\n")
		return
	}
	for i, f := range r.BelowThreshold {
		why := whyNot(f, true, r.Threshold, nil)
		fmt.Fprintf(b, "- #%d %s %s %s (%.2f): %s\n", len(r.Findings)+i+1, inline(string(f.Severity)), inline(string(f.RiskType)),
			location(f.Finding), f.Confidence, inline(truncate(oneLine(f.Description), 200)))
		// Why first: a reader must see at a glance which stage kept the
		// finding out, even one an eval gate confirmed.
		fmt.Fprintf(b, "  - **Why below %.2f:** %s\n", why.Threshold, inline(truncate(oneLine(why.String()), 600)))
		if trail := orderedTrail(f.Trail); len(trail) > 0 {
			steps := make([]string, len(trail))
			for k, v := range trail {
				steps[k] = trailStep(v)
			}
			b.WriteString("  - Trail: " + strings.Join(steps, " → ") + "\n")
		}
	}
	b.WriteString("\n")
}

// MaxDroppedListed bounds the findings the Markdown lists as dropped by
// triage: a large change can drop hundreds, and the JSON report has them
// all.
const MaxDroppedListed = 50

func writeDropped(b *strings.Builder, r *Report) {
	dropped, nums := r.Dropped, numbers(r)
	more := 0
	if len(dropped) > MaxDroppedListed {
		dropped, more = dropped[:MaxDroppedListed], len(dropped)-MaxDroppedListed
	}
	first := len(r.Findings) + len(r.BelowThreshold) + 1
	b.WriteString("## Dropped by triage\n\n")
	if len(dropped) == 0 {
		b.WriteString("None.\n")
		return
	}
	for i, f := range dropped {
		outcome := inline(whyNot(f, false, 0, nums).String())
		fmt.Fprintf(b, "- #%d %s %s — %s — %s\n", first+i, inline(string(f.RiskType)), location(f.Finding),
			outcome, inline(truncate(oneLine(f.Description), 160)))
	}
	if more > 0 {
		fmt.Fprintf(b, "- … and %d more, listed in the JSON report (`--format json`).\n", more)
	}
}

// changeName names what was reviewed: base..head, or the diff file of a
// review of a patch (no base), rather than "?..name.patch".
func changeName(r *Report) string {
	if r.BaseRef == "" && r.BaseSHA == "" && r.HeadRef != "" {
		return "diff " + r.HeadRef
	}
	return refName(r.BaseRef, r.BaseSHA) + ".." + refName(r.HeadRef, r.HeadSHA)
}

// tookLabel renders a review's duration: milliseconds under a second
// (a quick review did not take "0s"), else whole seconds.
func tookLabel(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return d.Round(time.Second).String()
}

// refName prefers the ref the user gave, falling back to a short SHA.
func refName(ref, sha string) string {
	switch {
	case ref != "":
		return ref
	case sha != "":
		return shortSHA(sha)
	}
	return "?"
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func fileLabel(file string) string {
	if file == "" {
		return "(no file)"
	}
	return codeSpan(file)
}

func linesLabel(start, end int) string {
	if start == end {
		return fmt.Sprintf("line %d", start)
	}
	return fmt.Sprintf("lines %d–%d", start, end)
}

// location renders "file:10" or "file:10-12" as inline code.
func location(f review.Finding) string {
	start, end := lineRange(f)
	loc := fmt.Sprintf("%s:%d", f.File, start)
	if end != start {
		loc += fmt.Sprintf("-%d", end)
	}
	return codeSpan(loc)
}

func skipped(r *Report, stage review.Stage) bool {
	for _, s := range r.SkippedStages {
		if review.Stage(s) == stage {
			return true
		}
	}
	return false
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// thousands formats n with comma separators: 1234567 → "1,234,567".
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// writeConfigWarnings lists the invalid repository configuration files
// first: the reader must know the review ran without them.
func writeConfigWarnings(b *strings.Builder, r *Report) {
	if len(r.ConfigWarnings) == 0 {
		return
	}
	b.WriteString("## Configuration warnings\n\nThese repository configuration files are invalid and were ignored; " +
		"the review used the defaults instead.\n\n| File | Line | Problem |\n|---|---|---|\n")
	for _, w := range r.ConfigWarnings {
		fmt.Fprintf(b, "| %s | %d | %s |\n", cellCode(w.File), w.Line, cell(w.Message))
	}
	b.WriteString("\n")
}

// writeResolved lists the findings of the review this one was built on
// that it no longer raises.
func writeResolved(b *strings.Builder, r *Report) {
	if len(r.Resolved) == 0 {
		return
	}
	b.WriteString("## Resolved since the previous review\n\n| File | Lines | Risk | Finding |\n|---|---|---|---|\n")
	for _, f := range r.Resolved {
		fmt.Fprintf(b, "| %s | %d-%d | %s | %s |\n", cellCode(f.File), f.LineStart, f.LineEnd, cell(string(f.RiskType)), cell(f.Description))
	}
	b.WriteString("\n")
}
