package feedback

import (
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/store"
)

func TestTouched(t *testing.T) {
	files := map[string][]lineRange{
		"a.go":    {{from: 10, to: 10}, {from: 21, to: 20}}, // line 10 deleted; an insertion before old line 21
		"gone.go": {{gone: true}},
	}
	for _, tc := range []struct {
		file       string
		start, end int
		want       bool
	}{
		{"a.go", 10, 10, true},
		{"a.go", 8, 12, true},
		{"a.go", 11, 11, false},
		{"a.go", 20, 21, true},  // the insertion lands between 20 and 21
		{"a.go", 21, 25, false}, // before the range starts: the range's lines are the same
		{"a.go", 15, 20, false}, // after it ends
		{"gone.go", 1, 1, true},
		{"other.go", 1, 1, false},
	} {
		if got := touched(files, tc.file, tc.start, tc.end); got != tc.want {
			t.Errorf("touched(%s, %d-%d) = %v, want %v", tc.file, tc.start, tc.end, got, tc.want)
		}
	}
}

func TestCodeHash(t *testing.T) {
	a := "x := 1\nif  x > 0 {\n\tpanic(x)\n}\n"
	b := "// moved\nx := 1\nif x > 0 {\n    panic(x)\n}\n"
	if CodeHash(a, 2, 3) != CodeHash(b, 3, 4) || CodeHash(a, 2, 3) == "" {
		t.Error("the same lines moved and re-indented hash differently")
	}
	if CodeHash(a, 2, 3) == CodeHash(strings.Replace(a, "panic", "log", 1), 2, 3) {
		t.Error("an edited line keeps its hash")
	}
	if CodeHash(a, 4, 9) != "" || CodeHash(a, 0, 1) != "" {
		t.Error("lines outside the file hash")
	}
}

func TestCalibrateStaysWithinBounds(t *testing.T) {
	stats := map[string]store.Calibration{
		"static":      {RiskType: "static", Decided: 20, Dismissed: 18, Resolved: 1}, // mostly dismissed: raise
		"concurrency": {RiskType: "concurrency", Decided: 20, Dismissed: 0, Resolved: 19},
		"intent":      {RiskType: "intent", Decided: MinDecided - 1, Dismissed: MinDecided - 1},
		"lifecycle":   {RiskType: "lifecycle", Decided: 10, Dismissed: 10},
	}
	got := map[string]float64{}
	for _, c := range Calibrate(0.6, map[string]float64{"lifecycle": 0.9}, stats) {
		got[c.RiskType] = c.Threshold
		if !strings.Contains(c.Reason, "decided findings") {
			t.Errorf("%s: reason %q does not say why", c.RiskType, c.Reason)
		}
	}
	if _, ok := got["intent"]; ok {
		t.Error("calibrated a risk type with too few decided findings")
	}
	if got["static"] <= 0.6 || got["static"] > 0.6+MaxRaise {
		t.Errorf("static: %.2f, want raised within %.2f", got["static"], MaxRaise)
	}
	if got["concurrency"] >= 0.6 || got["concurrency"] < 0.6-MaxLower-1e-9 {
		t.Errorf("concurrency: %.2f, want lowered by at most %.2f", got["concurrency"], MaxLower)
	}
	if got["lifecycle"] != 0.95 {
		t.Errorf("lifecycle from its override 0.9: %.2f, want capped at 0.95", got["lifecycle"])
	}
}

func TestGraphqlURL(t *testing.T) {
	for rest, want := range map[string]string{
		"https://api.github.com/":         "https://api.github.com/graphql",
		"https://ghe.example.com/api/v3/": "https://ghe.example.com/api/graphql",
		"http://127.0.0.1:9/":             "http://127.0.0.1:9/graphql",
	} {
		if got := graphqlURL(rest); got != want {
			t.Errorf("graphqlURL(%s) = %s, want %s", rest, got, want)
		}
	}
}
