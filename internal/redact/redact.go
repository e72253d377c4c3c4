package redact

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// markerPrefix starts every marker; text that already holds one is never
// redacted again.
const markerPrefix = "[REDACTED:"

// Redactor replaces secrets with numbered markers. One Redactor numbers the
// values of every text it is given, per kind, so the same value gets the
// same marker throughout (use one per review). It is safe for concurrent
// use. The zero value is ready to use.
type Redactor struct {
	mu    sync.Mutex
	seen  map[string]string // value → its marker
	count map[string]int    // kind → last N
	found int
}

// New returns an empty Redactor.
func New() *Redactor { return &Redactor{} }

// String redacts s with a new Redactor: markers are numbered within s only.
func String(s string) string { return New().Text(s) }

// Found returns how many secrets (occurrences) the Redactor has replaced.
func (r *Redactor) Found() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.found
}

// marker returns the marker of value, numbering new values per kind. A
// value keeps the marker it got first, even where a later rule would give
// it another kind.
func (r *Redactor) marker(kind, value string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen, r.count = map[string]string{}, map[string]int{}
	}
	r.found++
	if m, ok := r.seen[value]; ok {
		return m
	}
	r.count[kind]++
	m := fmt.Sprintf("%s%s:%d]", markerPrefix, kind, r.count[kind])
	r.seen[value] = m
	return m
}

// Bytes is Text for a byte slice; it returns data itself when nothing was
// redacted.
func (r *Redactor) Bytes(data []byte) []byte {
	s := string(data)
	out := r.Text(s)
	if out == s {
		return data
	}
	return []byte(out)
}

// Text returns s with every secret replaced by its marker. Line breaks are
// kept where they were: the result has as many lines as s.
func (r *Redactor) Text(s string) string { return r.redact(s, false) }

// Diff is Text for a unified diff: secrets that span lines are followed
// through the hunks with the ' ', '+' and '-' of each line set aside, and
// those prefixes are kept.
func (r *Redactor) Diff(s string) string { return r.redact(s, true) }

func (r *Redactor) redact(s string, isDiff bool) string {
	if s == "" {
		return s
	}
	lines := strings.Split(s, "\n")
	changed := false
	view, off := lines, make([]int, len(lines))
	if isDiff {
		view = make([]string, len(lines))
		for i, l := range lines {
			if l != "" && strings.ContainsRune(" +-", rune(l[0])) && !isFileHeader(l) {
				off[i] = 1
			}
			view[i] = l[off[i]:]
		}
	}
	for _, b := range findBlocks(view) {
		b.apply(lines, off, r.marker(b.kind, b.value))
		changed = true
	}
	// Diff lines are judged without their ' ', '+' or '-': rules anchored
	// at the start of a line (.env, INI, .pgpass) see the file's line.
	for i, l := range lines {
		o := off[i]
		if nl := r.line(l[o:]); nl != l[o:] {
			lines[i], changed = l[:o]+nl, true
		}
	}
	if r.scan(lines) {
		changed = true
	}
	if !changed {
		return s
	}
	return strings.Join(lines, "\n")
}

// isFileHeader reports the ---/+++ lines that name a diff's files.
func isFileHeader(l string) bool {
	for _, p := range []string{"--- a/", "+++ b/", "--- /dev/null", "+++ /dev/null", "--- \"", "+++ \""} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// hit is one secret value found on a line, at [start, end).
type hit struct {
	start, end int
	kind       string
}

// line redacts one line: the table's patterns, then assignments.
func (r *Redactor) line(l string) string {
	hits := ruleCache.get(l, foldedHits)
	if len(hits) == 0 {
		return l
	}
	var b strings.Builder
	prev := 0
	for _, h := range hits {
		b.WriteString(l[prev:h.start])
		b.WriteString(r.marker(h.kind, l[h.start:h.end]))
		prev = h.end
	}
	b.WriteString(l[prev:])
	return b.String()
}

// ruleHits finds the secrets of one line by the table's patterns, then
// assignments, in order of position. It depends on the line alone, so its
// result is cached.
func ruleHits(l string) []hit {
	var hits []hit
	add := func(h hit) {
		if h.start >= h.end || strings.Contains(l[h.start:h.end], markerPrefix) {
			return
		}
		for _, o := range hits {
			if h.start < o.end && o.start < h.end {
				return
			}
		}
		hits = append(hits, h)
	}
	low := strings.ToLower(l)
	found := rulesHinted.find(low)
	for i, rule := range Rules {
		if !rulesHinted.tried(i, found) {
			continue
		}
		for _, m := range rule.Pattern.FindAllStringSubmatchIndex(l, -1) {
			s, e := m[2*rule.Group], m[2*rule.Group+1]
			if s < 0 || (rule.Valid != nil && !rule.Valid(l[s:e])) {
				continue
			}
			add(hit{s, e, rule.Kind})
		}
	}
	for _, h := range assignments(l, low) {
		add(h)
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].start < hits[j].start })
	return hits
}

// PromptNote tells a model what the markers mean; every stage that shows
// reviewed text to a model includes it.
const PromptNote = `Redacted secrets: a value shown as [REDACTED:kind:N] was a secret (a key, token, password or private key) removed before the review; the same N means the same value. A hard-coded secret is itself a finding: report it (risk type authorization) at the line where the marker stands, and do not ask for or guess the original value.`

// hinted reports whether low contains one of hints (all when hints is
// empty).
func hinted(low string, hints []string) bool {
	if len(hints) == 0 {
		return true
	}
	for _, h := range hints {
		if strings.Contains(low, h) {
			return true
		}
	}
	return false
}

// nameHints are the words one of which a line must contain to hold an
// assignment to a secret-looking name (see secretKind).
var nameHints = []string{"secret", "token", "pass", "pwd", "_pw", "key", "credential", "auth"}

// markerRe matches a marker, capturing its kind and number.
var markerRe = regexp.MustCompile(`\[REDACTED:([a-z0-9-]+):(\d+)\]`)

// Reserve notes the markers already in text, so the values the Redactor
// numbers later get numbers above them: text redacted earlier by another
// Redactor and new text can then share a message without two values
// showing the same marker.
func (r *Redactor) Reserve(text string) {
	if !strings.Contains(text, markerPrefix) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen, r.count = map[string]string{}, map[string]int{}
	}
	for _, m := range markerRe.FindAllStringSubmatch(text, -1) {
		if n, err := strconv.Atoi(m[2]); err == nil && n > r.count[m[1]] {
			r.count[m[1]] = n
		}
	}
}
