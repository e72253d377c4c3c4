package untrusted

import (
	"fmt"
	"regexp"
	"strings"
)

// Span is a run of consecutive lines of a prompt that lie outside every
// fence. First and Last are 1-based line numbers.
type Span struct {
	First, Last int
	Lines       []string
}

// Outside returns the spans of prompt that lie outside the fences whose
// ids are given. A fence runs from its opening line ("<<<UNTRUSTED-id …")
// to its closing line ("UNTRUSTED-id>>>"), both included; inside it only
// that closing line ends it. A fence that is never closed does not count:
// its lines are returned as outside, so a broken prompt is never taken for
// a fenced one. Opening lines with any other id are ordinary lines, as
// they are to the model, which knows only its request's ids. With no ids,
// the whole prompt is outside.
func Outside(prompt string, ids ...string) []Span {
	lines := strings.Split(prompt, "\n")
	var spans []Span
	var cur *Span
	flush := func() {
		if cur != nil {
			spans = append(spans, *cur)
			cur = nil
		}
	}
	add := func(no int, line string) {
		if cur == nil {
			cur = &Span{First: no}
		}
		cur.Last = no
		cur.Lines = append(cur.Lines, line)
	}
	for i := 0; i < len(lines); i++ {
		if f, ok := opened(lines[i], ids); ok {
			end := -1
			for j := i + 1; j < len(lines); j++ {
				if lines[j] == f.Close() {
					end = j
					break
				}
			}
			if end >= 0 {
				flush()
				i = end
				continue
			}
		}
		add(i+1, lines[i])
	}
	flush()
	return spans
}

// opened reports whether line opens a fence with one of ids.
func opened(line string, ids []string) (Fence, bool) {
	for _, id := range ids {
		f := Fence{id: id}
		if strings.HasPrefix(line, "<<<"+f.tag()+" ") {
			return f, true
		}
	}
	return Fence{}, false
}

// declared matches the fence tags a Rules text names.
var declared = regexp.MustCompile(`a line starting "<<<UNTRUSTED-([0-9a-f]{24})"`)

// DeclaredIDs returns the ids of the fences whose rules text explains,
// in order and without repeats: the fences a model was told about.
func DeclaredIDs(text string) []string {
	var ids []string
	seen := map[string]bool{}
	for _, m := range declared.FindAllStringSubmatch(text, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			ids = append(ids, m[1])
		}
	}
	return ids
}

// Check returns an error naming every line of prompt outside the fences
// with the given ids that contains a line of one of the hostile strings
// (lines shorter than four characters are not looked for): text that
// reached the model as if the fleet had written it. It is the test of
// every prompt that carries repository text.
func Check(prompt string, hostile []string, ids ...string) error {
	var pieces []string
	for _, h := range hostile {
		for _, p := range strings.Split(h, "\n") {
			if p = strings.TrimSpace(p); len(p) >= 4 {
				pieces = append(pieces, p)
			}
		}
	}
	var bad []string
	for _, s := range Outside(prompt, ids...) {
		for k, line := range s.Lines {
			for _, h := range pieces {
				if strings.Contains(line, h) {
					bad = append(bad, fmt.Sprintf("line %d holds %q outside the fence: %s", s.First+k, h, line))
					break
				}
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%d unfenced lines:\n%s", len(bad), strings.Join(bad, "\n"))
}
