package agent

import (
	"strings"
	"testing"
)

// FuzzParseVerdict checks that any argument string yields either a valid
// submission or a tool error, never a panic.
func FuzzParseVerdict(f *testing.F) {
	for _, seed := range []string{
		`{"verdict":"confirmed","confidence":0.9,"reasoning":"r","evidence":[{"kind":"tool_fact","match":"abc"}]}`,
		`{"verdict":"refuted","confidence":-1}`,
		`{"evidence":[null, {}, {"required":"yes"}]}`,
		`[]`, `null`, `"x"`, `{"confidence":1e400}`, ``,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		sub, err := parseVerdict(raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "submit_verdict ") {
				t.Fatalf("error %q does not name the tool", err)
			}
			return
		}
		if sub.confidence < 0 || sub.confidence > 1 || sub.reasoning == "" {
			t.Fatalf("invalid submission accepted: %+v", sub)
		}
	})
}

// FuzzGlob checks that globs never panic and that a compiled glob never
// matches a path it says no directory of could contain.
func FuzzGlob(f *testing.F) {
	for _, seed := range []string{"**/*.go|a/b/c.go", "src/**|src/x", "[|a", "a/**/b/**|a/b", "*|x/y"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		pattern, p, _ := strings.Cut(in, "|")
		g, err := compileGlob(pattern)
		if err != nil || p == "" || strings.Contains(p, "//") || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
			return
		}
		if !g.match(p) {
			return
		}
		segs := strings.Split(p, "/")
		for i := 1; i < len(segs); i++ {
			if dir := strings.Join(segs[:i], "/"); !g.mayContain(dir) {
				t.Fatalf("glob %q matches %q but rules out its directory %q", pattern, p, dir)
			}
		}
	})
}
