package redact

import (
	"math"
	"regexp"
	"strings"
	"unicode"
)

// envLine is a .env / shell assignment at the start of a line: NAME=value,
// also after a diff prefix and after the line numbers prompts put before
// code ("  12 + NAME=…", "  12 | NAME=…", "12: NAME=…").
// A Dockerfile's ENV and ARG, a shell's export and a Java properties
// file's dotted names (spring.datasource.password=…) are the same form.
var envLine = regexp.MustCompile(`^\s*(?:\d+\s*[|:]?\s+)?[+\- ]?\s*(?:(?:export|ENV|ARG|set|SET)\s+)?([A-Za-z_][A-Za-z0-9_.\-]*)=`)

// envSpace is a Dockerfile's older ENV NAME value form.
var envSpace = regexp.MustCompile(`^\s*(?:\d+\s*[|:]?\s+)?[+\- ]?\s*ENV\s+([A-Za-z_][A-Za-z0-9_]*)\s+(\S.*?)\s*$`)

// setSpace is fish's and cmd's set NAME value (fish's set -x NAME value):
// the space form of an assignment, which envLine takes with "=".
var setSpace = regexp.MustCompile(`^\s*(?:\d+\s*[|:]?\s+)?[+\- ]?\s*(?:set|SET)\s+(?:-[A-Za-z]+\s+)*([A-Za-z_][A-Za-z0-9_]*)\s+(["']?)([^\s"']+)["']?\s*$`)

// bracketKey is a value stored under a quoted key in a map or header set:
// headers['X-Api-Key'] = '…', os.environ["DB_PASSWORD"] = "…".
// It is code: only strong values count.
var bracketKey = regexp.MustCompile(`\[\s*["']([A-Za-z_][\w.\-]*)["']\s*\]\s*=\s*["']([^"'\s]+)["']`)

// nameValue is a setting written as a name and a value beside it:
// .NET's <add key="ApiKey" value="…"/>, <add name="DbPassword" value="…"/>,
// and the {"name": "DB_PASS", "value": "…"} of container definitions.
var nameValue = regexp.MustCompile(`(?:<[A-Za-z][\w.\-:]*\s[^<>]*?\b(?:key|name)\s*=\s*["']([A-Za-z_][\w.\-:]*)["'][^<>]*?\bvalue\s*=\s*|["']?name["']?\s*:\s*["']([A-Za-z_][\w.\-]*)["']\s*,\s*["']?value["']?\s*:\s*)(["'])([^"']*)["']`)

// settingValue is .NET's <setting name="ClientSecret" …><value>…</value>
// on one line.
var settingValue = regexp.MustCompile(`<setting\b[^<>]*\bname\s*=\s*["']([A-Za-z_][\w.\-]*)["'][^<>]*>\s*<value>([^<]+)</value>`)

// iniLine is NAME = value or NAME: value alone on a line with a bare
// value: INI, TOML without quotes, YAML, .properties. Code assigns
// expressions the same way, so the value is judged by iniValue.
var iniLine = regexp.MustCompile(`^\s*(?:\d+\s*[|:]?\s+)?[+\- ]?\s*([A-Za-z_][A-Za-z0-9_.\-]*)\s*[=:]\s*([^\s"'` + "`" + `]+)\s*$`)

// xmlElement is <name>value</name> (Maven's settings.xml, .NET configs).
var xmlElement = regexp.MustCompile(`<([A-Za-z_][\w.\-:]*)>\s*([^<\s][^<]*?)\s*</([A-Za-z_][\w.\-:]*)>`)

// pairCall is a name and a value given as two string arguments:
// os.Setenv("API_TOKEN", "…"), define('DB_PASSWORD', '…'),
// headers.set("X-Api-Key", "…").
var pairCall = regexp.MustCompile(`(["'])([A-Za-z_][\w.\-]*)["']\s*,\s*(["'])([^"'\s]+)["']`)

// assignment is NAME = value, NAME: value, "NAME": "value", NAME := value
// in code, YAML, JSON, TOML and the like. Group 1 is the name, 2 the
// operator, 3 the value with its quotes.
var assignment = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.\-]*)["']?\s*(:=|=>|=|:)[ \t]*(?:\[\]byte\(|String\(|str\(|Buffer\.from\()?("(?:[^"\\]|\\.)*"|'[^']*'|` + "`[^`]*`" + `|[^\s"'` + "`" + `,;#)}\]=<>][^\s"'` + "`" + `,;)}\]<>]*)`)

// assignments finds secret values assigned to secret-looking names on one
// line; low is the line in lower case. In a .env-style line any value that is not a placeholder counts;
// elsewhere only strong values (long, mixed, high entropy) do.
func assignments(l, low string) []hit {
	if !hinted(low, nameHints) {
		return nil
	}
	var hits []hit
	// Each form is tried only on lines holding its telltale, cheaply.
	if m := envSpaceMatch(l); m != nil {
		if kind := secretKind(l[m[2]:m[3]]); kind != "" && notPlaceholder(l[m[4]:m[5]]) {
			hits = append(hits, hit{m[4], m[5], valueKind(kind, l[m[4]:m[5]])})
		}
	}
	if m := iniLine.FindStringSubmatchIndex(l); m != nil {
		if kind := secretKind(l[m[2]:m[3]]); kind != "" && iniValue(l[m[4]:m[5]]) {
			hits = append(hits, hit{m[4], m[5], valueKind(kind, l[m[4]:m[5]])})
		}
	}
	for _, m := range xmlMatches(l) {
		name := l[m[2]:m[3]]
		if name == l[m[6]:m[7]] && secretKind(name) != "" && notPlaceholder(l[m[4]:m[5]]) {
			hits = append(hits, hit{m[4], m[5], valueKind(secretKind(name), l[m[4]:m[5]])})
		}
	}
	for _, m := range pairMatches(l) {
		if kind := secretKind(l[m[4]:m[5]]); kind != "" && notPlaceholder(l[m[8]:m[9]]) && !dotted.MatchString(l[m[8]:m[9]]) {
			hits = append(hits, hit{m[8], m[9], valueKind(kind, l[m[8]:m[9]])})
		}
	}
	if m := setSpaceMatch(l); m != nil {
		if kind := secretKind(l[m[2]:m[3]]); kind != "" && iniValue(l[m[6]:m[7]]) {
			hits = append(hits, hit{m[6], m[7], valueKind(kind, l[m[6]:m[7]])})
		}
	}
	if strings.Contains(l, "]") {
		for _, m := range bracketKey.FindAllStringSubmatchIndex(l, -1) {
			if kind := secretKind(l[m[2]:m[3]]); kind != "" && strongValue(l[m[4]:m[5]]) {
				hits = append(hits, hit{m[4], m[5], valueKind(kind, l[m[4]:m[5]])})
			}
		}
	}
	if strings.Contains(low, "value") {
		for _, m := range nameValue.FindAllStringSubmatchIndex(l, -1) {
			name := ""
			if m[2] >= 0 {
				name = l[m[2]:m[3]]
			} else if m[4] >= 0 {
				name = l[m[4]:m[5]]
			}
			if kind := secretKind(name); kind != "" && iniValue(l[m[8]:m[9]]) {
				hits = append(hits, hit{m[8], m[9], valueKind(kind, l[m[8]:m[9]])})
			}
		}
		for _, m := range settingValue.FindAllStringSubmatchIndex(l, -1) {
			if kind := secretKind(l[m[2]:m[3]]); kind != "" && iniValue(l[m[4]:m[5]]) {
				hits = append(hits, hit{m[4], m[5], valueKind(kind, l[m[4]:m[5]])})
			}
		}
	}
	if m := envLine.FindStringSubmatchIndex(l); m != nil {
		name := l[m[2]:m[3]]
		if kind := secretKind(name); kind != "" {
			s, e := envValue(l, m[1])
			if s < e && notPlaceholder(l[s:e]) {
				hits = append(hits, hit{s, e, valueKind(kind, l[s:e])})
			}
		}
	}
	// Each search starts where the previous match's value did, not where it
	// ended: an unquoted value may hold the next assignment (a=b.key="…").
	for at := 0; at < len(l); {
		m := assignment.FindStringSubmatchIndex(l[at:])
		if m == nil {
			break
		}
		for i := range m {
			if m[i] >= 0 {
				m[i] += at
			}
		}
		at = max(m[6], m[0]+1)
		name, op := l[m[2]:m[3]], l[m[4]:m[5]]
		kind := secretKind(name)
		if kind == "" {
			continue
		}
		s, e := m[6], m[7]
		quoted := strings.ContainsRune("\"'`", rune(l[s]))
		if quoted {
			s, e = s+1, e-1
		} else if op != ":" {
			continue // code: only literals are values, not expressions
		}
		if s < e && strongValue(l[s:e]) {
			hits = append(hits, hit{s, e, valueKind(kind, l[s:e])})
		}
	}
	return hits
}

// envValue returns the bounds of the value of a .env line starting at i:
// a quoted string's contents, or the text up to a " #" comment.
func envValue(l string, i int) (int, int) {
	rest := l[i:]
	if rest == "" {
		return i, i
	}
	if q := rest[0]; q == '"' || q == '\'' || q == '`' {
		if j := strings.IndexByte(rest[1:], q); j >= 0 {
			return i + 1, i + 1 + j
		}
		return i + 1, len(strings.TrimRight(l, " \t\r"))
	}
	end := len(rest)
	if j := strings.Index(rest, " #"); j >= 0 {
		end = j
	}
	v := strings.TrimRight(rest[:end], " \t\r")
	return i, i + len(v)
}

func envSpaceMatch(l string) []int {
	if !strings.Contains(l, "ENV ") {
		return nil
	}
	return envSpace.FindStringSubmatchIndex(l)
}

func setSpaceMatch(l string) []int {
	if !strings.Contains(l, "set ") && !strings.Contains(l, "SET ") {
		return nil
	}
	return setSpace.FindStringSubmatchIndex(l)
}

func xmlMatches(l string) [][]int {
	if !strings.Contains(l, "</") {
		return nil
	}
	return xmlElement.FindAllStringSubmatchIndex(l, -1)
}

func pairMatches(l string) [][]int {
	if !strings.Contains(l, "\",") && !strings.Contains(l, "',") {
		return nil
	}
	return pairCall.FindAllStringSubmatchIndex(l, -1)
}

// notUID filters -u values: docker's -u 1000:1000 is a user and group id.
func notUID(v string) bool {
	return notPlaceholder(v) && strings.Trim(v, "0123456789") != ""
}

// iniValue reports whether a bare value after NAME = or NAME: on a line
// of its own is a literal secret rather than code: not a placeholder, not
// an identifier, path, number, call or expression.
func iniValue(v string) bool {
	v = strings.TrimRight(v, ";,")
	if len(v) < 4 || !notPlaceholder(v) || dotted.MatchString(v) || strings.ContainsAny(v, "()[]{}") {
		return false
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.Contains(v, "://") {
		return false
	}
	ident, digits := true, true
	for _, c := range v {
		if !(unicode.IsLetter(c) || c == '_') {
			ident = false
		}
		if !unicode.IsDigit(c) && c != '.' {
			digits = false
		}
	}
	return !ident && !digits
}

// valueKind refines a name's kind by its value.
func valueKind(kind, value string) string {
	if kind == "aws-secret" && !awsSecretValue.MatchString(value) {
		return "secret"
	}
	return kind
}

var awsSecretValue = regexp.MustCompile(`^[A-Za-z0-9/+=]{40}$`)

// words splits an identifier into lower-case words at _ - . and at
// camelCase boundaries: "AWS_SECRET_ACCESS_KEY", "awsSecretKey" and
// "APIKey" give [aws secret access key], [aws secret key], [api key].
func words(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, c := range rs {
		switch {
		case c == '_' || c == '-' || c == '.':
			flush()
			continue
		case unicode.IsUpper(c) && len(cur) > 0:
			prevLower := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (unicode.IsUpper(rs[i-1]) && nextLower) {
				flush()
			}
		}
		cur = append(cur, c)
	}
	flush()
	return out
}

// notSecretLast are last words of names that hold no secret even when an
// earlier word says "token" or "secret": TOKEN_URL, secret_name, max_tokens.
var notSecretLast = map[string]bool{
	"url": true, "uri": true, "endpoint": true, "host": true, "path": true, "file": true, "dir": true,
	"type": true, "name": true, "id": true, "ids": true, "len": true, "length": true, "size": true,
	"count": true, "limit": true, "ttl": true, "expiry": true, "expires": true, "header": true,
	"field": true, "param": true, "prefix": true, "format": true, "mode": true, "enabled": true,
	"timeout": true, "tokens": true, "ref": true, "env": true, "var": true, "arn": true,
	"version": true, "label": true, "policy": true, "provider": true, "store": true, "manager": true,
}

// notSecretKey are words before "key" that make a key an index, not a
// secret: PRIMARY_KEY, cacheKey, publicKey.
var notSecretKey = map[string]bool{
	"primary": true, "foreign": true, "sort": true, "partition": true, "cache": true, "public": true,
	"idempotency": true, "routing": true, "lookup": true, "map": true, "hash": true, "object": true,
	"row": true, "group": true, "context": true, "ctx": true, "i18n": true, "translation": true,
	"config": true, "metadata": true, "dedupe": true, "sharding": true, "shard": true, "redis": true,
}

// secretKind returns the kind of secret a name holds, or "" for a name
// that holds none.
func secretKind(name string) string {
	ws := words(name)
	if len(ws) == 0 || notSecretLast[ws[len(ws)-1]] {
		return ""
	}
	has := map[string]bool{}
	for _, w := range ws {
		has[w] = true
	}
	last := ws[len(ws)-1]
	switch {
	case has["aws"] && has["secret"]:
		return "aws-secret"
	case has["azure"] && has["secret"]:
		return "azure-client-secret"
	case has["password"] || has["passwd"] || has["passphrase"] || (has["pwd"] && len(ws) > 1),
		last == "pass" && len(ws) > 1, last == "pw" && len(ws) > 1:
		return "password"
	case has["secret"] || has["secrets"] || has["token"] || has["apikey"] || has["credential"] || has["credentials"]:
		return "secret"
	case last == "key" && len(ws) > 1 && !notSecretKey[ws[len(ws)-2]]:
		return "secret"
	}
	return ""
}

// placeholders are values that stand for a secret without being one.
var placeholders = map[string]bool{
	"changeme": true, "change_me": true, "change-me": true, "password": true, "passwd": true,
	"secret": true, "token": true, "null": true, "nil": true, "none": true, "true": true,
	"false": true, "todo": true, "tbd": true, "fixme": true, "example": true, "placeholder": true,
	"dummy": true, "test": true, "redacted": true, "undefined": true, "empty": true, "default": true,
}

// notPlaceholder reports whether v looks like a real value rather than
// a placeholder: changeme, <your-key>, ${VAR}, $VAR, {{ .Token }}, %s,
// xxx, ****, short values built around the word example.
func notPlaceholder(v string) bool {
	v = strings.TrimSpace(v)
	low := strings.ToLower(v)
	switch {
	case v == "", placeholders[low], strings.Contains(v, markerPrefix):
		return false
	case strings.HasPrefix(v, "$"), strings.Contains(v, "${"), strings.Contains(v, "{{"),
		strings.HasPrefix(v, "%"), strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">"),
		strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}"):
		return false
	case strings.Contains(low, "example") && len(strings.ReplaceAll(low, "example", "")) < 12:
		// "example-token" stands for a value; a long random value with
		// EXAMPLE inside (AWS's published keys) is shaped like a real one.
		return false
	case strings.HasPrefix(low, "your"), strings.HasPrefix(low, "my-"),
		strings.HasPrefix(low, "my_"), strings.Contains(low, "placeholder"), strings.Contains(low, "changeme"):
		return false
	case sameRune(low):
		return false
	}
	return true
}

// sameRune reports a value made of one character repeated (xxxx, ****),
// allowing separators (xxxx-xxxx).
func sameRune(v string) bool {
	var first rune
	for _, c := range v {
		if c == '-' || c == '_' || c == '.' {
			continue
		}
		if first == 0 {
			first = c
		} else if c != first {
			return false
		}
	}
	return true
}

// strongValue reports whether a value assigned outside a .env file looks
// like a credential: not a placeholder, at least 8 characters without
// spaces, letters with digits or symbols, not a path or dotted
// identifier, and an entropy of at least 2.5 bits per character.
func strongValue(v string) bool {
	if len(v) < 8 || !notPlaceholder(v) || strings.ContainsAny(v, " \t") {
		return false
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.Contains(v, "://") || dotted.MatchString(v) {
		return false
	}
	var letter, other bool
	for _, c := range v {
		switch {
		case unicode.IsLetter(c):
			letter = true
		case c != '_' && c != '-' && c != '.':
			other = true
		}
	}
	return letter && other && entropy(v) >= 2.5
}

// dotted matches identifiers and paths such as cfg.Token or a.b.c.
var dotted = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:[.:][A-Za-z_][A-Za-z0-9_]*)+(?:\(\))?$`)

// mixedToken filters sk-… candidates: a real key mixes letters and digits
// at high entropy; "sk-learn-classifier-module" does not.
func mixedToken(v string) bool {
	var digit, letter bool
	for _, c := range v {
		digit = digit || unicode.IsDigit(c)
		letter = letter || unicode.IsLetter(c)
	}
	return digit && letter && entropy(v) >= 3.5
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	freq := map[rune]float64{}
	n := 0.0
	for _, c := range s {
		freq[c]++
		n++
	}
	h := 0.0
	for _, f := range freq {
		p := f / n
		h -= p * math.Log2(p)
	}
	return h
}
