package redact

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// The provider-shaped rules come from gitleaks' default rule set (about
// 200 rules with keyword prefiltering, entropy thresholds and allowlists,
// maintained as providers change their formats), run over each text after
// the project's own rules. The project's rules keep what a per-format
// scanner does not cover: assignments to secret-looking names in any
// syntax, URL userinfo, multi-line blocks, and the line-preserving
// replacement itself.

// scanDecodeDepth is how many rounds of base64, percent and hex decoding
// the scanner applies, so a token inside an encoded blob (a docker
// config.json auth, a Basic header, a percent-encoded URL) is found too.
const scanDecodeDepth = 1

var (
	scannerOnce sync.Once
	scanner     *detect.Detector
	errScanner  error
	// keywords holds every rule's keywords: a line without one (and
	// without an encoded run that could hide one) cannot match any rule.
	keywords *ahocorasick.Trie
)

// defaultScanner builds the gitleaks detector from its embedded default
// configuration, once. It reads the configuration with its own viper
// instance (the package-level one is shared state) and silences the
// library's logger, which would otherwise print to stderr.
func defaultScanner() (*detect.Detector, error) {
	scannerOnce.Do(func() {
		logging.Logger = zerolog.Nop()
		v := viper.New()
		v.SetConfigType("toml")
		if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
			errScanner = err
			return
		}
		var vc config.ViperConfig
		if err := v.Unmarshal(&vc); err != nil {
			errScanner = err
			return
		}
		cfg, err := vc.Translate()
		if err != nil {
			errScanner = err
			return
		}
		kw := make([]string, 0, len(cfg.Keywords))
		for k := range cfg.Keywords {
			kw = append(kw, strings.ToLower(k))
		}
		keywords = ahocorasick.NewTrieBuilder().AddStrings(kw).Build()
		d := detect.NewDetector(cfg)
		d.MaxDecodeDepth = scanDecodeDepth
		// Every match is redacted: a "gitleaks:allow" comment is written
		// by the submitter and decides nothing here.
		d.IgnoreGitleaksAllow = true
		scanner = d
	})
	return scanner, errScanner
}

// Prepare builds the secret scanner now rather than at the first
// redaction: a worker calls it at start, so its first review does not wait
// for the rules to compile (about 20 ms of CPU, while every task of that
// review waits on it) and a scanner that cannot be built stops the worker
// instead of leaving redaction to the project's own rules.
func Prepare() error {
	if _, err := defaultScanner(); err != nil {
		return fmt.Errorf("build the secret scanner: %w", err)
	}
	return nil
}

// scannerKinds renames the scanner's rules whose id would say less than
// the project's own kind for the same secret.
var scannerKinds = map[string]string{
	"generic-api-key": "secret",
}

// encodedRun matches the runs of text a decoded finding may hide in.
var encodedRun = regexp.MustCompile(`[A-Za-z0-9+/_\-]{12,}={0,3}|(?:[A-Za-z0-9._~\-+]*%[0-9A-Fa-f]{2})+[A-Za-z0-9._~\-+]*`)

// scan runs the gitleaks rules over lines (already redacted by the
// project's rules) and replaces what they find in place, keeping the line
// structure. It reports whether anything changed.
func (r *Redactor) scan(lines []string) bool {
	d, err := defaultScanner()
	if err != nil {
		// The embedded configuration is part of the binary; a failure is a
		// build problem, and the project's own rules still ran.
		return false
	}
	changed := false
	// Each line is its own fragment: the detector runs a rule's pattern
	// over a whole fragment when the rule's keyword is anywhere in it, so
	// whole files make every common word ("key", "token") cost a pass of
	// the broad rules over everything. Lines carry nearly every secret;
	// the multi-line ones (key blocks) are the project's own rules'.
	for i, l := range lines {
		if len(l) < minCandidate {
			continue
		}
		for _, f := range detectLine(d, l) {
			if r.apply(lines, i, f) {
				changed = true
			}
		}
	}
	return changed
}

// minCandidate is the shortest line the scanner looks at.
const minCandidate = 8

// lineFinding is what redaction needs of a scanner finding.
type lineFinding struct{ rule, secret string }

// candidate reports whether line l may hold something the scanner finds:
// one of its rules' keywords, or an encoded run that may decode to one.
func candidate(l string) bool {
	if len(l) < minCandidate {
		return false
	}
	if keywords.MatchFirstString(strings.ToLower(l)) != nil {
		return true
	}
	return encodedCandidate(l)
}

// encodedCandidate reports whether l holds an encoded run that may decode
// to a secret: at least 16 characters with a digit or one of %+/=.
func encodedCandidate(l string) bool {
	if !mayHoldEncoded(l) {
		return false
	}
	for _, m := range encodedRun.FindAllString(l, -1) {
		if len(m) >= 16 && strings.ContainsAny(m, "0123456789%+/=") {
			return true
		}
	}
	return false
}

// mayHoldEncoded reports whether l has a run of at least 16 of the
// characters encodedRun's matches are made of, holding a digit or one of
// %+/=. Every run encodedCandidate accepts lies in such a run, and most
// lines of code have none: the loop costs a small part of running the
// pattern.
func mayHoldEncoded(l string) bool {
	run, special := 0, false
	for i := 0; i < len(l); i++ {
		switch c := l[i]; {
		case c >= '0' && c <= '9', c == '%', c == '+', c == '/', c == '=':
			run, special = run+1, true
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '-', c == '.', c == '~':
			run++
		default:
			run, special = 0, false
			continue
		}
		if run >= 16 && special {
			return true
		}
	}
	return false
}

// lineCache bounds a map from a line to what was found on it: the same
// lines are redacted again and again (the submission, the snapshot, then
// every model request that quotes them), and finding is the costly part.
// What is found depends on the line alone; markers are numbered after.
type lineCache[T any] struct {
	mu    sync.Mutex
	m     map[string]T
	bytes int // the lines' length, summed
}

// maxCachedLines and maxCachedBytes bound a lineCache; it is emptied when
// either is reached. The byte bound keeps a text of many long, distinct
// lines (a generated or hostile file) from holding hundreds of MB.
const (
	maxCachedLines = 100_000
	maxCachedBytes = 16 << 20
)

// maxCachedLine is the longest line kept in a lineCache.
const maxCachedLine = 4096

// get returns find(l), from the cache when l was seen.
func (c *lineCache[T]) get(l string, find func(string) T) T {
	if len(l) > maxCachedLine {
		return find(l)
	}
	c.mu.Lock()
	v, ok := c.m[l]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = find(l)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedLines || c.bytes+len(l) > maxCachedBytes {
		c.m, c.bytes = map[string]T{}, 0
	}
	c.bytes += len(l)
	// A line is a slice of the text it came from: kept as it is, it
	// would keep that whole text (a prompt, a file) alive in the cache.
	c.m[strings.Clone(l)] = v
	c.mu.Unlock()
	return v
}

func (c *lineCache[T]) reset() {
	c.mu.Lock()
	c.m, c.bytes = nil, 0
	c.mu.Unlock()
}

var (
	scanCache lineCache[[]lineFinding]
	ruleCache lineCache[[]hit]
)

// detectLine returns the scanner's findings on line l. Whether the line is
// a candidate at all is cached with them: the test runs a regular
// expression over every line, and most lines are seen many times.
func detectLine(d *detect.Detector, l string) []lineFinding {
	return scanCache.get(l, func(l string) []lineFinding {
		if !candidate(l) {
			return nil
		}
		var fs []lineFinding
		for _, f := range d.DetectString(l) {
			fs = append(fs, lineFinding{rule: f.RuleID, secret: f.Secret})
		}
		return fs
	})
}

// apply replaces the secret of finding f, made on line i, in lines.
func (r *Redactor) apply(lines []string, i int, f lineFinding) bool {
	changed := false
	{
		secret := strings.Trim(f.secret, "\r\n")
		if len(secret) < 6 || strings.Contains(secret, markerPrefix) || !notPlaceholder(secret) {
			return false
		}
		kind := f.rule
		if k, ok := scannerKinds[kind]; ok {
			kind = k
		}
		if !strings.Contains(lines[i], firstLine(secret)) {
			// Found after decoding: redact the encoded run that holds it.
			return r.replaceEncoded(lines, i, i, secret, kind)
		}
		marker := r.marker(kind, secret)
		for _, part := range strings.Split(secret, "\n") {
			part = strings.TrimSpace(part)
			if len(part) < 6 {
				continue
			}
			for i, l := range lines {
				if nl := replaceOutsideMarkers(l, part, marker); nl != l {
					lines[i], changed = nl, true
				}
			}
		}
	}
	return changed
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}

// replaceEncoded replaces, on lines from..to, the encoded runs whose
// decoding holds secret. Where none decodes to it (the scanner's decoder
// reads runs this one does not) every long encoded run on those lines
// goes: redacting too much beats sending the secret.
func (r *Redactor) replaceEncoded(lines []string, from, to int, secret, kind string) bool {
	from, to = max(from, 0), min(to, len(lines)-1)
	changed := false
	for pass := 0; pass < 2 && !changed; pass++ {
		for i := from; i <= to; i++ {
			l := lines[i]
			var b strings.Builder
			prev := 0
			for _, m := range encodedRun.FindAllStringIndex(l, -1) {
				run := l[m[0]:m[1]]
				if strings.Contains(l[max(0, m[0]-len(markerPrefix)):m[0]], markerPrefix) {
					continue
				}
				if pass == 0 && !decodesTo(run, secret) {
					continue
				}
				if pass == 1 && len(run) < 16 {
					continue
				}
				b.WriteString(l[prev:m[0]])
				b.WriteString(r.marker(kind, run))
				prev = m[1]
			}
			if prev > 0 {
				b.WriteString(l[prev:])
				lines[i], changed = b.String(), true
			}
		}
	}
	return changed
}

// decodesTo reports whether run, decoded as base64, percent-encoding or
// hex (up to two rounds), contains secret.
func decodesTo(run, secret string) bool {
	cands := []string{run}
	for range 2 {
		var next []string
		for _, c := range cands {
			for _, d := range decodings(c) {
				if strings.Contains(d, secret) {
					return true
				}
				next = append(next, d)
			}
		}
		cands = next
	}
	return false
}

func decodings(s string) []string {
	var out []string
	trimmed := strings.TrimRight(s, "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(trimmed); err == nil {
			out = append(out, string(b))
		}
	}
	if strings.Contains(s, "%") {
		if u, err := url.QueryUnescape(s); err == nil {
			out = append(out, u)
		}
	}
	if b, err := hex.DecodeString(s); err == nil {
		out = append(out, string(b))
	}
	return out
}

// replaceOutsideMarkers replaces every occurrence of value in l with
// marker, leaving markers already in l untouched.
func replaceOutsideMarkers(l, value, marker string) string {
	if !strings.Contains(l, value) {
		return l
	}
	if !strings.Contains(l, markerPrefix) {
		return strings.ReplaceAll(l, value, marker)
	}
	var b strings.Builder
	prev := 0
	for _, m := range markerRe.FindAllStringIndex(l, -1) {
		b.WriteString(strings.ReplaceAll(l[prev:m[0]], value, marker))
		b.WriteString(l[m[0]:m[1]])
		prev = m[1]
	}
	b.WriteString(strings.ReplaceAll(l[prev:], value, marker))
	return b.String()
}
