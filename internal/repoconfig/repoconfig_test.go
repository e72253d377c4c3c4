package repoconfig

import (
	"reflect"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

func TestPaths(t *testing.T) {
	got := Paths([]string{"a/b/c.go", "a/d.go", "top.go"})
	want := []string{".reviewfleet.yaml", "a/.reviewfleet.yaml", "a/b/.reviewfleet.yaml"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Paths = %v, want %v", got, want)
	}
}

func TestCascade(t *testing.T) {
	c, warns := Load(map[string][]byte{
		".reviewfleet.yaml":     []byte("ignore: [\"**/*.gen.go\"]\ninstructions: Root rule.\nthresholds:\n  concurrency: 0.5\n  robustness: 0.7\ndisabled_risk_types: [intent]\n"),
		"svc/.reviewfleet.yaml": []byte("ignore: [\"fixtures/**\"]\ninstructions: |\n  Service rule.\nthresholds:\n  robustness: 0.9\ndisabled_risk_types: [static]\n"),
	})
	if len(warns) > 0 {
		t.Fatalf("warnings: %v", warns)
	}
	for p, want := range map[string]bool{
		"x.gen.go": true, "svc/a.gen.go": true, "svc/fixtures/f.json": true, "fixtures/f.json": false, "svc/a.go": false,
	} {
		if got, _ := c.Ignored(p); got != want {
			t.Errorf("Ignored(%s) = %v, want %v", p, got, want)
		}
	}
	if _, by := c.Ignored("svc/fixtures/f.json"); by != "svc/.reviewfleet.yaml" {
		t.Errorf("ignored by %q", by)
	}
	r := c.For("svc/api/h.go")
	if r.Instructions != "Root rule.\n\nService rule." {
		t.Errorf("instructions %q", r.Instructions)
	}
	if !reflect.DeepEqual(r.Thresholds, map[string]float64{"concurrency": 0.5, "robustness": 0.9}) {
		t.Errorf("thresholds %v", r.Thresholds)
	}
	if !r.Disabled(review.Intent) || !r.Disabled(review.Static) || r.Disabled(review.Robustness) {
		t.Errorf("disabled %v", r.DisabledRiskTypes)
	}
	top := c.For("main.go")
	if top.Instructions != "Root rule." || top.Thresholds["robustness"] != 0.7 || top.Disabled(review.Static) {
		t.Errorf("root rules leak from svc/: %+v", top)
	}
}

func TestInvalidFilesAreReportedWithLines(t *testing.T) {
	cases := map[string]struct {
		text string
		line int
		msg  string
	}{
		"unknown key":  {"ignore: []\ninstructoins: x\n", 2, `unknown key "instructoins" (known keys: ignore,`},
		"wrong type":   {"thresholds:\n  robustness: high\n", 2, `wants a number, not "high"`},
		"not a list":   {"ignore: gen\n", 1, `wants a list of text, not "gen"`},
		"syntax":       {"ignore: [a\ninstructions: x\n", 1, "expected"},
		"risk type":    {"instructions: ok\ndisabled_risk_types:\n  - static\n  - styling\n", 4, "styling"},
		"threshold":    {"thresholds:\n  robustness: 0.5\n  concurrency: 1.5\n", 3, "1.5"},
		"bad glob":     {"ignore:\n  - \"a/[b\"\n", 2, "a/[b"},
		"unknown risk": {"thresholds:\n  speed: 0.5\n", 2, "speed"},
	}
	for name, tc := range cases {
		c, warns := Load(map[string][]byte{"d/.reviewfleet.yaml": []byte(tc.text)})
		if len(warns) == 0 {
			t.Errorf("%s: no warning", name)
			continue
		}
		w := warns[0]
		if w.File != "d/.reviewfleet.yaml" || w.Line != tc.line || !strings.Contains(w.Message, tc.msg) {
			t.Errorf("%s: warning %+v, want line %d mentioning %q", name, w, tc.line, tc.msg)
		}
		if r := c.For("d/x.go"); !reflect.DeepEqual(r, review.Rules{}) {
			t.Errorf("%s: an invalid file still applies: %+v", name, r)
		}
	}
}

func TestEmptyFileIsValid(t *testing.T) {
	if _, warns := Load(map[string][]byte{".reviewfleet.yaml": []byte("# nothing yet\n")}); len(warns) > 0 {
		t.Fatalf("warnings: %v", warns)
	}
}
