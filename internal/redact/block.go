package redact

import (
	"regexp"
	"sort"
	"strings"
)

// block is a secret that spans lines: its value and the spans of each line
// to replace with the value's marker.
type block struct {
	kind, value string
	edits       []edit
}

// edit is the span [start, end) of line to replace.
type edit struct{ line, start, end int }

// maxBlockLines bounds how far a block is followed.
const maxBlockLines = 400

var (
	pemBegin  = regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
	pemEnd    = regexp.MustCompile(`-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
	base64Run = regexp.MustCompile(`[A-Za-z0-9+/=]{8,}`)
	// yamlBlock is "name: |" or "name: >-" opening a YAML block scalar.
	yamlBlock = regexp.MustCompile(`^(\s*)-?\s*([A-Za-z_][A-Za-z0-9_.\-]*)["']?\s*:\s*[|>][-+0-9]*\s*$`)
	lit       = `"(?:[^"\\]|\\.)*"|'[^'\\]*'`
	// assignHead is an assignment to a name whose value starts on the next
	// line, or whose literal continues there ("…" +, "…" \, "…" .).
	assignHead = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.\-]*)["']?\s*(?::=|=|:)\s*(?:(` + lit + `)\s*)?([+.\\])?\s*$`)
	// litLine is a line holding only a string literal, maybe continued.
	litLine = regexp.MustCompile(`^\s*(?:\+\s*)?(` + lit + `)\s*([+.\\])?\s*[,;)]?\s*$`)
	// yamlKey is "name:" alone on its line: its value, if a scalar, is on
	// the following more-indented line.
	yamlKey = regexp.MustCompile(`^\s*-?\s*([A-Za-z_][A-Za-z0-9_.\-]*)["']?\s*:\s*$`)
	// envName is the name of a Kubernetes or Helm env entry, "- name: X",
	// whose value follows on the next line as "value: …".
	envName       = regexp.MustCompile(`^\s*-?\s*["']?name["']?\s*:\s*["']?([A-Za-z_][A-Za-z0-9_.\-]*)["']?\s*$`)
	envEntryValue = regexp.MustCompile(`^\s*-?\s*["']?value["']?\s*:\s*(\S.*?)\s*$`)
	// settingHead is .NET's <setting name="X" …> with its <value> on the
	// next line.
	settingHead = regexp.MustCompile(`<setting\b[^<>]*\bname\s*=\s*["']([A-Za-z_][\w.\-]*)["'][^<>]*>\s*$`)
	valueElem   = regexp.MustCompile(`^\s*<value>([^<]+)</value>`)
)

// findBlocks finds the secrets that span lines: private-key blocks, YAML
// block scalars under secret names, and assignments whose literal starts
// on the next line or is concatenated over several lines.
func findBlocks(lines []string) []block {
	var out []block
	for i := 0; i < len(lines); i++ {
		var b *block
		var next int
		switch h := headCache.get(lines[i], headOf); h.kind {
		case headPEM:
			b, next = pemBlock(lines, i)
		case headPutty:
			b, next = puttyBlock(lines, i)
		case headNamed:
			b, next = namedValue(lines, i)
		case headLiteral:
			// A literal that ends its line goes on only where the next
			// line starts with one.
			if nextIsLit(lines, i) {
				b, next = continued(lines, i)
			}
		case headColon:
			if h.yamlKey {
				b, next = yamlPlain(lines, i)
			}
			if b == nil && h.assign {
				b, next = continued(lines, i)
			}
		case headYAMLBlock:
			b, next = yamlScalar(lines, i)
		case headAssign:
			b, next = continued(lines, i)
		}
		if b != nil {
			out = append(out, *b)
			i = next - 1
		}
	}
	return out
}

// headKind is how a line may start a secret that spans lines.
type headKind uint8

const (
	headNone      headKind = iota
	headPEM                // a private key's BEGIN line without its END
	headPutty              // a PuTTY key's Private-Lines header
	headNamed              // an env entry's or a .NET setting's name
	headLiteral            // an assignment ending in a literal, under a secret name
	headColon              // a secret name ending in ':' (yamlKey, assign say which)
	headYAMLBlock          // a YAML block scalar under a secret name
	headAssign             // an assignment whose value starts on the next line
)

// lineHead is what findBlocks needs to know of one line on its own.
type lineHead struct {
	kind    headKind
	yamlKey bool // headColon: "name:" alone on its line
	assign  bool // headColon: an assignment head
}

// headCache keeps each line's lineHead: the regular expressions that
// decide it are most of the cost of redacting, and the same lines are
// redacted again and again.
var headCache lineCache[lineHead]

// headOf classifies line l as the possible head of a secret that spans
// lines. It depends on the line alone.
func headOf(l string) lineHead {
	t := strings.TrimRight(l, " \t\r")
	if t == "" {
		return lineHead{}
	}
	last := t[len(t)-1]
	switch {
	case strings.Contains(l, "PRIVATE KEY") && pemBegin.MatchString(l) && !pemEnd.MatchString(l[pemBegin.FindStringIndex(l)[1]:]):
		return lineHead{kind: headPEM}
	case strings.Contains(l, "Private-Lines:") && puttyLines.MatchString(l):
		return lineHead{kind: headPutty}
	case nameHead(l) && (envName.MatchString(l) || settingHead.MatchString(l)):
		return lineHead{kind: headNamed}
	case last == '"' || last == '\'':
		if hinted(strings.ToLower(l), nameHints) && assignHead.MatchString(l) {
			return lineHead{kind: headLiteral}
		}
	case !strings.ContainsRune("|>=:+.\\-0123456789", rune(last)) || !hinted(strings.ToLower(l), nameHints):
		// Not the head of a block scalar or a continued assignment.
	case last == ':':
		return lineHead{kind: headColon, yamlKey: yamlKey.MatchString(l), assign: assignHead.MatchString(l)}
	case yamlBlock.MatchString(l):
		return lineHead{kind: headYAMLBlock}
	case assignHead.MatchString(l):
		return lineHead{kind: headAssign}
	}
	return lineHead{}
}

// nameHead reports, cheaply, a line that may name an env entry or a .NET
// setting whose value is on the next line.
func nameHead(l string) bool {
	t := strings.TrimLeft(l, " \t-")
	return strings.HasPrefix(t, "name") || strings.HasPrefix(t, `"name"`) || strings.HasPrefix(t, "'name'") ||
		strings.Contains(l, "<setting")
}

// nextIsLit reports whether the line after i starts with a string literal
// (after any indent and a joining +).
func nextIsLit(lines []string, i int) bool {
	if i+1 >= len(lines) {
		return false
	}
	t := strings.TrimLeft(lines[i+1], " \t+")
	return t != "" && (t[0] == '"' || t[0] == '\'')
}

// puttyLines heads the private part of a PuTTY key file; the number is
// how many base64 lines follow.
var puttyLines = regexp.MustCompile(`^\s*[+\- ]?Private-Lines:\s*(\d+)\s*$`)

func puttyBlock(lines []string, i int) (*block, int) {
	m := puttyLines.FindStringSubmatch(lines[i])
	n := 0
	for _, c := range m[1] {
		n = n*10 + int(c-'0')
		if n > maxBlockLines {
			n = maxBlockLines
			break
		}
	}
	b := &block{kind: "private-key"}
	var val strings.Builder
	j := i + 1
	for ; j < len(lines) && j <= i+n; j++ {
		if strings.Contains(lines[j], markerPrefix) {
			continue
		}
		for _, r := range base64Run.FindAllStringIndex(lines[j], -1) {
			val.WriteString(lines[j][r[0]:r[1]])
			b.edits = append(b.edits, edit{j, r[0], r[1]})
		}
	}
	b.value = val.String()
	if len(b.value) < 16 {
		return nil, i + 1
	}
	return b, j
}

func pemBlock(lines []string, i int) (*block, int) {
	b := &block{kind: "private-key"}
	var val strings.Builder
	j := i + 1
	for ; j < len(lines) && j <= i+maxBlockLines; j++ {
		l := lines[j]
		stop := len(l)
		end := pemEnd.FindStringIndex(l)
		if end != nil {
			stop = end[0]
		}
		if strings.Contains(l, markerPrefix) {
			stop = 0 // already redacted
		}
		for _, m := range base64Run.FindAllStringIndex(l[:stop], -1) {
			val.WriteString(l[m[0]:m[1]])
			b.edits = append(b.edits, edit{j, m[0], m[1]})
		}
		if end != nil {
			j++
			break
		}
	}
	b.value = val.String()
	if len(b.value) < 16 {
		return nil, i + 1
	}
	return b, j
}

func yamlScalar(lines []string, i int) (*block, int) {
	kind, indent := secretKey(yamlBlock, 2, lines[i])
	if kind == "" {
		return nil, i + 1
	}
	b := &block{kind: kind}
	var parts []string
	j := i + 1
	for ; j < len(lines) && j <= i+maxBlockLines; j++ {
		l := lines[j]
		body := strings.TrimRight(l, " \t\r")
		if strings.TrimSpace(body) == "" {
			continue
		}
		lead := len(body) - len(strings.TrimLeft(body, " \t"))
		if lead <= indent {
			break
		}
		parts = append(parts, body[lead:])
		b.edits = append(b.edits, edit{j, lead, len(body)})
	}
	b.value = strings.Join(parts, "\n")
	if len(b.edits) == 0 || !notPlaceholder(b.value) || len(b.value) < 8 {
		return nil, i + 1
	}
	return b, j
}

func continued(lines []string, i int) (*block, int) {
	m := assignHead.FindStringSubmatchIndex(lines[i])
	kind := secretKind(lines[i][m[2]:m[3]])
	hasLit, more := m[4] >= 0, m[6] >= 0
	if kind == "" {
		return nil, i + 1
	}
	// A literal with nothing after it may still go on: Python and C join
	// adjacent literals, so the next line holding only a literal is the
	// value's rest.
	implicit := hasLit && !more
	b := &block{kind: kind}
	var val strings.Builder
	if hasLit {
		val.WriteString(lines[i][m[4]+1 : m[5]-1])
		b.edits = append(b.edits, edit{i, m[4] + 1, m[5] - 1})
	}
	j := i + 1
	for ; j < len(lines) && j <= i+maxBlockLines; j++ {
		lm := litLine.FindStringSubmatchIndex(lines[j])
		if lm == nil {
			break
		}
		val.WriteString(lines[j][lm[2]+1 : lm[3]-1])
		b.edits = append(b.edits, edit{j, lm[2] + 1, lm[3] - 1})
		if lm[4] < 0 && !implicit {
			j++
			break
		}
	}
	b.value = val.String()
	continuation := len(b.edits)
	if hasLit {
		continuation-- // the head's own literal
	}
	// Without a literal on a following line this is a one-line
	// assignment, which assignments() judges.
	if continuation == 0 || !strongValue(b.value) {
		return nil, i + 1
	}
	return b, j
}

// apply writes marker over the block's spans in lines, each line's spans
// shifted by its prefix length off.
func (b block) apply(lines []string, off []int, marker string) {
	edits := append([]edit(nil), b.edits...)
	sort.Slice(edits, func(x, y int) bool {
		if edits[x].line != edits[y].line {
			return edits[x].line < edits[y].line
		}
		return edits[x].start > edits[y].start
	})
	for _, e := range edits {
		l, o := lines[e.line], off[e.line]
		lines[e.line] = l[:o+e.start] + marker + l[o+e.end:]
	}
}

// yamlPlain takes the value of "name:" under a secret-looking name when it
// is a plain scalar on the next, more-indented line, or a list of them:
//
//	password:
//	  value
//	client_secret:
//	  - value
//
// A nested mapping or anything that reads as code is left alone.
func yamlPlain(lines []string, i int) (*block, int) {
	kind, indent := secretKey(yamlKey, 1, lines[i])
	if kind == "" {
		return nil, i + 1
	}
	b := &block{kind: kind}
	var parts []string
	j := i + 1
	for ; j < len(lines) && j <= i+maxBlockLines; j++ {
		body := strings.TrimRight(lines[j], " \t\r")
		if strings.TrimSpace(body) == "" {
			continue
		}
		lead := len(body) - len(strings.TrimLeft(body, " \t"))
		if lead <= indent && !(lead == indent && strings.HasPrefix(body[lead:], "- ")) {
			break
		}
		start := lead
		if strings.HasPrefix(body[start:], "- ") {
			start += 2
			for start < len(body) && body[start] == ' ' {
				start++
			}
		} else if len(parts) > 0 {
			break // a scalar is one line; only list items repeat
		}
		s, e := unquote(body, start, len(body))
		v := body[s:e]
		// A list under a secret name is as often a list of secrets' names
		// (compose's secrets: - db-password) as of values: items must be
		// strong values.
		item := start != lead
		if v == "" || yamlMapKey.MatchString(body[start:]) || strings.Contains(v, " #") || strings.ContainsAny(v[:1], "&*!|>") ||
			!iniValue(v) || (item && !strongValue(v)) {
			return nil, i + 1
		}
		parts = append(parts, v)
		b.edits = append(b.edits, edit{j, s, e})
		if !strings.HasPrefix(body[lead:], "- ") {
			j++
			break
		}
	}
	if len(parts) == 0 {
		return nil, i + 1
	}
	b.value = strings.Join(parts, "\n")
	return b, j
}

// yamlMapKey is a line that opens a nested mapping entry (key: …).
var yamlMapKey = regexp.MustCompile(`^["']?[A-Za-z_][\w.\-]*["']?\s*:(?:\s|$)`)

// unquote narrows [s, e) of l to inside a pair of matching quotes.
func unquote(l string, s, e int) (int, int) {
	if e-s >= 2 && (l[s] == '"' || l[s] == '\'') && l[e-1] == l[s] {
		return s + 1, e - 1
	}
	return s, e
}

// namedValue takes the value of a setting whose name and value are on two
// lines: a Kubernetes or Helm env entry (- name: DB_PASS, then value: …)
// and .NET's <setting name="…"> with <value>…</value> below it. A
// valueFrom reference has no value to take.
func namedValue(lines []string, i int) (*block, int) {
	j := i + 1
	for j < len(lines) && strings.TrimSpace(lines[j]) == "" && j < i+3 {
		j++
	}
	if j >= len(lines) {
		return nil, i + 1
	}
	var name string
	var vm []int
	if m := envName.FindStringSubmatch(lines[i]); m != nil {
		name, vm = m[1], envEntryValue.FindStringSubmatchIndex(lines[j])
	} else if m := settingHead.FindStringSubmatch(lines[i]); m != nil {
		name, vm = m[1], valueElem.FindStringSubmatchIndex(lines[j])
	}
	kind := secretKind(name)
	if vm == nil || kind == "" {
		return nil, i + 1
	}
	s, e := unquote(lines[j], vm[2], vm[3])
	if v := lines[j][s:e]; iniValue(v) && !strings.Contains(v, markerPrefix) {
		return &block{kind: valueKind(kind, v), value: v, edits: []edit{{j, s, e}}}, j + 1
	}
	return nil, i + 1
}

// secretKey reads the key that submatch group of re captures on line, a
// YAML key opening a value on the lines below, and returns the secret kind
// its name suggests ("" for none) and the line's indentation.
func secretKey(re *regexp.Regexp, group int, line string) (kind string, indent int) {
	m := re.FindStringSubmatchIndex(line)
	if m == nil {
		return "", 0
	}
	return secretKind(line[m[2*group]:m[2*group+1]]), len(line) - len(strings.TrimLeft(line, " \t"))
}
