package llmfake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/dataset"
	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/gitsrc"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// GoldenReviewer is a competent reviewer that knows a dataset's golden
// issues and establishes them only through the expert's tools:
//
//   - intent proposes the golden issues of each file it is shown, at their
//     lines, and one decoy per changed file: a plausible claim about
//     another changed line that is false;
//   - verify anchors a finding when the code it is about is in the prompt;
//   - the expert greps the repository for the code on the issue's line,
//     reads the file around the hit, finds the definition of each helper
//     the issue depends on (find_symbol, then grep in that file) and reads
//     it, and confirms quoting only lines the tools returned; a search that
//     finds nothing makes it refute. Decoys are read and refuted;
//   - eval confirms when the expert's passed evidence quotes the issue's
//     code, and disputes otherwise.
//
// It never reads the repository itself after loading the dataset, so a
// tool that returns nothing, a filter that hides files or a gate that
// drops evidence costs it the issue. Requests it does not recognise are
// answered from their schema.
type GoldenReviewer struct {
	issues []*knownFinding
	decoys []*knownFinding
	files  []*changedFile

	mu    sync.Mutex
	stats map[string]map[string]int
}

// knownFinding is a finding the reviewer proposes: a golden issue or a
// decoy.
type knownFinding struct {
	caseName    string
	file        string
	start, end  int
	text        string
	riskType    review.RiskType
	severity    string
	code        string // verbatim code on one of its lines
	related     []dataset.Related
	decoy       bool
	decoyLine   int
	description string
}

// changedFile is a file a case changes, with the added lines that tell
// whether a prompt shows its diff.
type changedFile struct {
	caseName string
	path     string
	marks    []string
}

// NewGoldenReviewer loads the dataset in dir (the eval format, see
// docs/eval.md). A golden issue's code is its "snippet" or, without one,
// the longest line of its range read from the case's repository (the work
// tree next to a diff, or the head revision) or from the diff.
func NewGoldenReviewer(ctx context.Context, dir string) (*GoldenReviewer, error) {
	cases, err := dataset.LoadDataset(dir)
	if err != nil {
		return nil, err
	}
	g := &GoldenReviewer{stats: map[string]map[string]int{}}
	for _, c := range cases {
		if err := g.addCase(ctx, c); err != nil {
			return nil, fmt.Errorf("golden reviewer: case %s: %w", c.Name, err)
		}
	}
	if len(g.issues) == 0 {
		return nil, fmt.Errorf("golden reviewer: dataset %s has no golden issue with a file and lines", dir)
	}
	return g, nil
}

func (g *GoldenReviewer) addCase(ctx context.Context, c dataset.Case) error {
	changed, err := caseDiff(ctx, c)
	if err != nil {
		return err
	}
	content := func(name string) ([]string, error) { return caseFile(ctx, c, name, changed) }
	var mine []*knownFinding
	for i, gi := range c.Golden {
		if gi.File == "" {
			continue // text only: no location to propose
		}
		k := &knownFinding{
			caseName: c.Name, file: cleanPath(gi.File), start: gi.StartLine, end: gi.EndLine,
			text: normSpace(gi.Text), riskType: findingRiskType(gi.RiskType), severity: findingSeverity(gi.Severity),
			code: strings.TrimSpace(gi.Snippet), related: gi.Related,
		}
		if k.code == "" {
			lines, err := content(k.file)
			if err != nil {
				return fmt.Errorf("golden[%d]: the code at %s:%d: %w", i, k.file, k.start, err)
			}
			k.code = longestLine(lines, k.start, k.end)
			if len(k.code) < 8 {
				// A brace or a bare return says nothing: the issue's
				// surroundings are more distinctive.
				k.code = longestLine(lines, k.start-3, k.end+3)
			}
		}
		k.code = clip(k.code)
		if len(normSpace(k.code)) < 4 {
			return fmt.Errorf("golden[%d]: no code to search for at %s:%d-%d (give a \"snippet\")", i, k.file, k.start, k.end)
		}
		k.description = k.text
		mine = append(mine, k)
	}
	g.issues = append(g.issues, mine...)
	for _, f := range changed {
		cf := &changedFile{caseName: c.Name, path: cleanPath(f.Path())}
		var candidates []diff.Line
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				if l.Kind != diff.Added || !distinctive(l.Text) {
					continue
				}
				cf.marks = append(cf.marks, strings.TrimSpace(l.Text))
				if farFrom(mine, cf.path, l.NewNo, 4) && !coversCode(mine, l.Text) {
					candidates = append(candidates, l)
				}
			}
		}
		if len(cf.marks) == 0 {
			// Only short lines were added (or only lines deleted): any
			// added line will do, and failing that the path itself.
			for _, h := range f.Hunks {
				for _, l := range h.Lines {
					if t := strings.TrimSpace(l.Text); l.Kind == diff.Added && len(t) >= 4 {
						cf.marks = append(cf.marks, t)
					}
				}
			}
		}
		g.files = append(g.files, cf)
		if len(candidates) == 0 {
			continue
		}
		l := candidates[len(candidates)/2]
		code := strings.TrimSpace(l.Text)
		g.decoys = append(g.decoys, &knownFinding{
			caseName: c.Name, file: cf.path, start: l.NewNo, end: l.NewNo, decoy: true, decoyLine: l.NewNo,
			code: code, riskType: review.Robustness, severity: string(review.High),
			description: fmt.Sprintf("Unchecked failure at %s line %d: `%s` can fail on unexpected input and nothing handles it.", cf.path, l.NewNo, code),
		})
	}
	return nil
}

// caseDiff parses what the case reviews: its patch, or base..head of its
// repository.
func caseDiff(ctx context.Context, c dataset.Case) ([]*diff.File, error) {
	var data []byte
	var err error
	if c.Diff != "" {
		data, err = os.ReadFile(c.DiffPath())
	} else {
		data, err = gitsrc.Diff(ctx, c.RepoPath(), c.Base, c.Head)
	}
	if err != nil {
		return nil, fmt.Errorf("read the change: %w", err)
	}
	files, err := diff.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("parse the change: %w", err)
	}
	return files, nil
}

// caseFile returns the head version of a file of the case: from the work
// tree next to a diff, from the head revision, or (a diff alone, or a
// file the repository lacks) the added and context lines the diff shows,
// the rest empty.
func caseFile(ctx context.Context, c dataset.Case, name string, changed []*diff.File) ([]string, error) {
	repo := c.RepoPath()
	var data []byte
	var err error
	switch {
	case c.Diff == "" && repo != "":
		data, err = gitsrc.ReadFile(ctx, repo, c.Head, name)
	case repo != "" && !dataset.IsRemote(repo):
		data, err = gitsrc.ReadFile(ctx, repo, "", name)
	default:
		return diffSide(changed, name)
	}
	if err != nil {
		if lines, derr := diffSide(changed, name); derr == nil {
			return lines, nil // the diff still shows the issue's lines
		}
		return nil, err
	}
	return strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n"), nil
}

func diffSide(changed []*diff.File, name string) ([]string, error) {
	for _, f := range changed {
		if cleanPath(f.Path()) != name {
			continue
		}
		var lines []string
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				if l.Kind == diff.Deleted {
					continue
				}
				for len(lines) < l.NewNo {
					lines = append(lines, "")
				}
				lines[l.NewNo-1] = l.Text
			}
		}
		return lines, nil
	}
	return nil, fmt.Errorf("%s is not in the diff and the case has no local repository", name)
}

// longestLine is the longest line of start..end (1-based): the most
// distinctive code to search for.
func longestLine(lines []string, start, end int) string {
	best := ""
	for n := max(start, 1); n <= end && n <= len(lines); n++ {
		if t := strings.TrimSpace(lines[n-1]); len(t) > len(best) {
			best = t
		}
	}
	return best
}

// maxCode bounds the code searched for: grep takes patterns of at most
// 512 characters, and quoting metacharacters can double a line's length.
const maxCode = 200

// clip cuts code to maxCode bytes on a character boundary; a prefix of a
// line still finds it.
func clip(code string) string {
	if len(code) <= maxCode {
		return code
	}
	cut := maxCode
	for cut > 0 && !utf8.RuneStart(code[cut]) {
		cut--
	}
	return strings.TrimSpace(code[:cut])
}

// distinctive reports a line worth recognising a diff by: code, not a
// brace, a blank or a comment.
func distinctive(line string) bool {
	t := strings.TrimSpace(line)
	if len(t) < 12 {
		return false
	}
	for _, p := range []string{"//", "#", "/*", "*", "--", `"""`} {
		if strings.HasPrefix(t, p) {
			return false
		}
	}
	return true
}

func farFrom(issues []*knownFinding, file string, line, distance int) bool {
	for _, k := range issues {
		if k.file == file && line >= k.start-distance && line <= k.end+distance {
			return false
		}
	}
	return true
}

func coversCode(issues []*knownFinding, line string) bool {
	for _, k := range issues {
		if containsCode(line, k.code) {
			return true
		}
	}
	return false
}

// findingRiskType is the risk type a finding about an issue carries: the
// label itself when it is one of reviewfleet's, otherwise the closest by
// its words.
func findingRiskType(label string) review.RiskType {
	if rt, err := review.ParseRiskType(label); err == nil {
		return rt
	}
	l := strings.ToLower(label)
	for _, m := range []struct {
		words []string
		rt    review.RiskType
	}{
		{[]string{"secur", "auth", "inject", "access", "privacy", "exposure"}, review.Authorization},
		{[]string{"race", "concurr", "lock", "thread", "deadlock"}, review.Concurrency},
		{[]string{"leak", "resource", "lifecycle", "state", "close"}, review.Lifecycle},
		{[]string{"intent", "logic", "semantic"}, review.Intent},
		{[]string{"syntax", "static", "type"}, review.Static},
	} {
		for _, w := range m.words {
			if strings.Contains(l, w) {
				return m.rt
			}
		}
	}
	return review.Robustness
}

func findingSeverity(s string) string {
	if sev, err := review.ParseSeverity(s); err == nil {
		return string(sev)
	}
	return string(review.High)
}

// Handler answers the stages' requests.
func (g *GoldenReviewer) Handler() Handler {
	return func(_ context.Context, req openai.ChatCompletionRequest) Reply {
		switch SchemaName(req) {
		case "reviewfleet_intent":
			return JSON(map[string]any{"findings": g.intent(LastUser(req))})
		case "reviewfleet_verify":
			return g.verify(LastUser(req))
		case "reviewfleet_eval":
			return g.eval(LastUser(req))
		}
		if len(req.Tools) > 0 || len(conversation(req)) > 0 {
			return g.expert(req)
		}
		return FromSchema(req)
	}
}

// intent proposes the issues and decoys of every file whose diff the
// prompt shows: a file is shown when most of its distinctive added lines
// are in the prompt.
func (g *GoldenReviewer) intent(prompt string) []map[string]any {
	findings := []map[string]any{}
	for _, f := range g.files {
		if !f.shownIn(prompt) {
			continue
		}
		for _, k := range append(append([]*knownFinding{}, g.issues...), g.decoys...) {
			if k.caseName != f.caseName || k.file != f.path {
				continue
			}
			confidence := 0.85
			if k.decoy {
				confidence = 0.8 // as sure as of a real issue: only the expert can tell
			}
			findings = append(findings, map[string]any{
				"risk_type": string(k.riskType), "file": k.file, "line_start": k.start, "line_end": k.end,
				"description": k.description, "suggestion": "Handle the case the description names.",
				"quote": k.code, "fix": "", "severity": k.severity, "confidence": confidence,
			})
		}
	}
	return findings
}

// shownIn reports whether prompt shows the file's diff: half of its
// distinctive added lines (or five) are in it. A file with no added line
// to recognise is shown when the prompt names it.
func (f *changedFile) shownIn(prompt string) bool {
	if len(f.marks) == 0 {
		return mentionsPath(prompt, f.path)
	}
	text := normSpace(prompt)
	seen := 0
	for _, m := range f.marks {
		if strings.Contains(text, normSpace(m)) {
			seen++
		}
	}
	return seen > 0 && (seen*2 >= len(f.marks) || seen >= 5)
}

// identify finds which proposed finding a prompt is about: the one whose
// description it quotes (the longest, when one description contains
// another; a prompt that cuts long texts short is matched on their
// beginning), and among equals the one whose file and lines it names.
func (g *GoldenReviewer) identify(prompt string) *knownFinding {
	text := normSpace(prompt)
	var best *knownFinding
	bestLen, bestScore := 0, -1
	for _, k := range append(append([]*knownFinding{}, g.issues...), g.decoys...) {
		d := normSpace(k.description)
		n := len(d)
		if !strings.Contains(text, d) {
			if n <= minQuoted || !strings.Contains(text, prefix(d, minQuoted)) {
				continue
			}
			n = minQuoted
		}
		score := 0
		if mentionsPath(prompt, k.file) {
			score += 2
		}
		if strings.Contains(text, fmt.Sprintf("%d-%d", k.start, k.end)) {
			score++
		}
		if n > bestLen || n == bestLen && score > bestScore {
			best, bestLen, bestScore = k, n, score
		}
	}
	return best
}

// minQuoted is how much of a description's beginning identifies it when
// the prompt does not quote it whole.
const minQuoted = 80

func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// verify anchors a finding whose code the prompt shows.
func (g *GoldenReviewer) verify(prompt string) Reply {
	k := g.identify(prompt)
	if k == nil || !containsCode(prompt, k.code) {
		return JSON(map[string]any{"anchored": false, "evidence": "The code the finding is about is not in the cited lines.", "adjusted_confidence": 0.2})
	}
	return JSON(map[string]any{"anchored": true, "evidence": "The cited lines hold `" + k.code + "`.", "adjusted_confidence": 0.85})
}

// eval confirms a golden issue when the expert's passed evidence quotes
// its code.
func (g *GoldenReviewer) eval(prompt string) Reply {
	k := g.identify(prompt)
	if k != nil && !k.decoy {
		for _, q := range passedQuotes(prompt) {
			if containsCode(q, k.code) {
				return JSON(map[string]any{
					"claim":            "If the finding holds, " + k.file + " shows `" + k.code + "` at the cited lines.",
					"counter_evidence": "None: the expert's checked evidence quotes that code.",
					"verdict":          "confirmed", "reason": "The expert quoted the code from the repository.", "final_confidence": 0.9,
				})
			}
		}
	}
	return JSON(map[string]any{
		"claim":            "If the finding holds, the expert's evidence quotes the code it describes.",
		"counter_evidence": "The expert's checked evidence does not quote that code.",
		"verdict":          "disputed", "reason": "Nothing checked against the repository shows the defect.", "final_confidence": 0.2,
	})
}

// expert takes the next step of the investigation the conversation so far
// calls for.
func (g *GoldenReviewer) expert(req openai.ChatCompletionRequest) Reply {
	g.count(latestResults(req))
	calls := conversation(req)
	k := g.identify(firstUser(req))
	var st step
	switch {
	case k == nil:
		st = verdict("inconclusive", 0.3, "The finding is not one this reviewer knows.", nil)
	case k.decoy:
		st = refuteDecoy(k, calls)
	default:
		st = investigate(k, calls)
	}
	if st.call != nil {
		if !forcedSummary(req) {
			return Tools(*st.call)
		}
		st = verdict("inconclusive", 0.3, "The investigation ran out of rounds.", nil)
	}
	if forcedSummary(req) {
		return JSON(st.verdict)
	}
	return Tools(ToolCall("submit_verdict", st.verdict))
}

// step is the expert's next move: a tool call, or a verdict.
type step struct {
	call    *openai.ToolCall
	verdict map[string]any
}

func verdict(v string, confidence float64, reasoning string, evidence []map[string]any) step {
	if evidence == nil {
		evidence = []map[string]any{}
	}
	return step{verdict: map[string]any{"verdict": v, "confidence": confidence, "reasoning": reasoning, "evidence": evidence}}
}

// errNeedCall carries the call whose result the investigation waits for.
type errNeedCall struct{ call openai.ToolCall }

func (e errNeedCall) Error() string { return "waiting for " + e.call.Function.Name }

// ask returns the result of the tool call with these arguments if the
// conversation has it, or an errNeedCall to make it.
func ask(calls []pastCall, name string, args map[string]any) (string, error) {
	tc := ToolCall(name, args)
	want := canonicalJSON(tc.Function.Arguments)
	for _, c := range calls {
		if c.name == name && c.args == want && c.answered {
			return c.result, nil
		}
	}
	return "", errNeedCall{tc}
}

// finding is the error of an investigation that came to nothing: the
// tools did not show the code.
type finding struct{ reason string }

func (f finding) Error() string { return f.reason }

// investigate establishes a golden issue through the tools.
func investigate(k *knownFinding, calls []pastCall) step {
	evidence, err := establish(k, calls)
	var need errNeedCall
	if errors.As(err, &need) {
		return step{call: &need.call}
	}
	if err != nil {
		return verdict("refuted", 0.15, "The repository does not show what the finding describes: "+err.Error()+".",
			[]map[string]any{{"kind": "file_exists", "path": k.file, "required": true}})
	}
	return verdict("confirmed", 0.9, fmt.Sprintf("%s holds `%s` at the cited lines, as the search and the read show.", k.file, k.code), evidence)
}

// establish gathers the evidence of a golden issue: the line the search
// found in the cited file, quoted as read_file returned it, and the same
// for each related piece of code.
func establish(k *knownFinding, calls []pastCall) ([]map[string]any, error) {
	at, line, err := locate(calls, k.code, "", k.file, k.start)
	if err != nil {
		return nil, err
	}
	evidence := []map[string]any{
		{"kind": "content_contains", "path": at.path, "start_line": at.line, "end_line": at.line, "match": line, "required": true},
		{"kind": "tool_fact", "match": k.code, "required": true},
	}
	for _, r := range k.related {
		where, near := "", 0
		if r.Symbol != "" {
			res, err := ask(calls, "find_symbol", map[string]any{"name": r.Symbol})
			if err != nil {
				return nil, err
			}
			defs := scanHits(res)
			if len(defs) == 0 {
				return nil, finding{"find_symbol found no definition of " + r.Symbol}
			}
			// The code sits in one of the files defining the symbol: each
			// is searched in turn until one holds it.
			rn, rline, err := locateIn(calls, r.Snippet, defs)
			if err != nil {
				return nil, err
			}
			evidence = append(evidence, map[string]any{
				"kind": "content_contains", "path": rn.path, "start_line": rn.line, "end_line": rn.line, "match": rline, "required": true})
			continue
		}
		rn, rline, err := locate(calls, r.Snippet, where, where, near)
		if err != nil {
			return nil, err
		}
		evidence = append(evidence, map[string]any{
			"kind": "content_contains", "path": rn.path, "start_line": rn.line, "end_line": rn.line, "match": rline, "required": true})
	}
	return evidence, nil
}

// locateIn locates code in the files of defs, in order, near each
// definition.
func locateIn(calls []pastCall, code string, defs []hit) (located, string, error) {
	tried := map[string]bool{}
	var last error
	for _, d := range defs {
		if tried[d.path] {
			continue
		}
		tried[d.path] = true
		at, line, err := locate(calls, code, d.path, d.path, d.line)
		var f finding
		if err == nil || !errors.As(err, &f) {
			return at, line, err
		}
		last = err
	}
	return located{}, "", last
}

// located is where locate found code.
type located struct {
	path string
	line int
}

// locate greps for code (within glob when given), takes the hit in file
// (any file when empty) nearest to line near, reads around it and returns
// the line that holds the code, as read_file showed it.
func locate(calls []pastCall, code, glob, file string, near int) (located, string, error) {
	args := map[string]any{"pattern": regexp.QuoteMeta(code)}
	if glob != "" {
		args["path_glob"] = glob
	}
	res, err := ask(calls, "grep", args)
	if err != nil {
		return located{}, "", err
	}
	var best *hit
	for _, h := range scanHits(res) {
		if file != "" && h.path != file {
			continue
		}
		if best == nil || abs(h.line-near) < abs(best.line-near) {
			h := h
			best = &h
		}
	}
	if best == nil {
		where := "the repository"
		if file != "" {
			where = file
		}
		return located{}, "", finding{fmt.Sprintf("grep for `%s` found nothing in %s", code, where)}
	}
	res, err = ask(calls, "read_file", map[string]any{"path": best.path, "start_line": max(1, best.line-3), "end_line": best.line + 3})
	if err != nil {
		return located{}, "", err
	}
	lines := readLines(res)
	nums := make([]int, 0, len(lines))
	for n := range lines {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	for _, n := range nums {
		if containsCode(lines[n], code) {
			return located{path: best.path, line: n}, strings.TrimSpace(lines[n]), nil
		}
	}
	return located{}, "", finding{fmt.Sprintf("read_file of %s around line %d does not show `%s`", best.path, best.line, code)}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// refuteDecoy reads the decoy's line and refutes it, quoting the line.
func refuteDecoy(k *knownFinding, calls []pastCall) step {
	res, err := ask(calls, "read_file", map[string]any{"path": k.file, "start_line": max(1, k.decoyLine-2), "end_line": k.decoyLine + 2})
	var need errNeedCall
	if errors.As(err, &need) {
		return step{call: &need.call}
	}
	line, ok := readLines(res)[k.decoyLine]
	if !ok || strings.TrimSpace(line) == "" {
		return verdict("refuted", 0.1, "The cited line could not be read; nothing shows the failure the finding claims.", nil)
	}
	return verdict("refuted", 0.1, fmt.Sprintf("Line %d reads `%s`; nothing there can fail the way the finding claims.", k.decoyLine, strings.TrimSpace(line)),
		[]map[string]any{{"kind": "content_contains", "path": k.file, "start_line": k.decoyLine, "end_line": k.decoyLine,
			"match": strings.TrimSpace(line), "required": true}})
}

// count records the outcome of each tool result the expert was just sent.
func (g *GoldenReviewer) count(results []pastCall) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range results {
		if c.name == "submit_verdict" {
			continue
		}
		outcome := "hit"
		switch {
		case strings.HasPrefix(strings.TrimSpace(c.result), "error:"):
			outcome = "error"
		case (c.name == "grep" || c.name == "find_symbol") && len(scanHits(c.result)) == 0:
			outcome = "empty"
		case c.name == "read_file" && len(readLines(c.result)) == 0:
			outcome = "empty"
		}
		if g.stats[c.name] == nil {
			g.stats[c.name] = map[string]int{}
		}
		g.stats[c.name][outcome]++
	}
}

// ToolOutcomes counts the tool results the expert received, by tool and
// outcome: hit (the search found lines, the read returned lines), empty
// or error.
func (g *GoldenReviewer) ToolOutcomes() map[string]map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]map[string]int{}
	for t, m := range g.stats {
		out[t] = map[string]int{}
		for k, v := range m {
			out[t][k] = v
		}
	}
	return out
}

// Issues is how many golden issues the reviewer proposes; Decoys how many
// false findings it proposes alongside them.
func (g *GoldenReviewer) Issues() int { return len(g.issues) }

// Decoys is how many false findings the reviewer proposes.
func (g *GoldenReviewer) Decoys() int { return len(g.decoys) }
