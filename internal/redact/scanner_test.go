package redact

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The run check before encodedRun changes no answer: every line of the
// corpora, and random lines made mostly of the pattern's characters, are
// candidates exactly when the pattern alone says so.
func TestEncodedCandidateMatchesThePattern(t *testing.T) {
	t.Parallel()
	lines := corpusLines(t)
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aZq09+/=%._~-%3Ax :\"'"
	for range 20000 {
		b := make([]byte, rng.IntN(60))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		lines = append(lines, string(b))
	}
	yes := 0
	for _, l := range lines {
		want := encodedByPattern(l)
		if got := encodedCandidate(l); got != want {
			t.Fatalf("encodedCandidate(%q) = %v, the pattern says %v", l, got, want)
		}
		if want {
			yes++
		}
	}
	if yes == 0 || yes == len(lines) {
		t.Fatalf("%d of %d lines are candidates: the comparison proves nothing", yes, len(lines))
	}
}

// The one-pass hint index tries a rule exactly when one of its hints is on
// the line, over the corpora's lines and each rule's own hints.
func TestRuleHintsMatchHinted(t *testing.T) {
	t.Parallel()
	lines := corpusLines(t)
	for _, r := range Rules {
		for _, h := range r.Hints {
			lines = append(lines, "x "+h+" y", strings.ToUpper(h))
		}
	}
	tried := 0
	for _, l := range lines {
		low := strings.ToLower(l)
		found := rulesHinted.find(low)
		for i, r := range Rules {
			want := hinted(low, r.Hints)
			if got := rulesHinted.tried(i, found); got != want {
				t.Fatalf("rule %d (%s) on %q: tried %v, its hints say %v", i, r.Kind, l, got, want)
			}
			if want {
				tried++
			}
		}
	}
	if tried == 0 {
		t.Fatal("no rule was tried: the comparison proves nothing")
	}
}

// encodedByPattern is encodedCandidate without the run check.
func encodedByPattern(l string) bool {
	for _, m := range encodedRun.FindAllString(l, -1) {
		if len(m) >= 16 && strings.ContainsAny(m, "0123456789%+/=") {
			return true
		}
	}
	return false
}

// corpusLines returns every line of the clean and secret corpora.
func corpusLines(t *testing.T) []string {
	t.Helper()
	var lines []string
	for _, dir := range []string{"clean", "secrets"} {
		names, _ := filepath.Glob(filepath.Join("testdata", dir, "*"))
		for _, n := range names {
			data, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, strings.Split(string(data), "\n")...)
		}
	}
	return lines
}

// Prepare builds the scanner a worker's first redaction uses, with the
// provider rules in it. It runs in a process of its own: earlier tests of
// the package built the scanner already.
func TestPrepareBuildsTheScanner(t *testing.T) {
	if os.Getenv("REDACT_PREPARE_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestPrepareBuildsTheScanner$", "-test.count", "1")
		cmd.Env = append(os.Environ(), "REDACT_PREPARE_CHILD=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("in a fresh process: %v\n%s", err, out)
		}
		return
	}
	if scanner != nil {
		t.Fatal("the scanner was built before Prepare")
	}
	if err := Prepare(); err != nil {
		t.Fatal(err)
	}
	if scanner == nil || keywords == nil {
		t.Fatal("Prepare returned without a scanner")
	}
	if n := len(scanner.Config.Rules); n < 100 {
		t.Fatalf("the scanner holds %d rules, want the provider set (about 200)", n)
	}
}
