package prompts

import (
	"slices"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

func packText(t *testing.T, s *Set, p Pack) string {
	t.Helper()
	text, ok := s.File(packFile(p))
	if !ok || text == "" {
		t.Fatalf("pack %s has no text", p)
	}
	return text
}

// The seed's acceptance test: a diff that only adds async iteration gets a
// prompt without the lifecycle and intent pack definitions.
func TestAsyncOnlyDiffLeavesOutLifecycleAndIntent(t *testing.T) {
	t.Parallel()
	s := mustLoad(t)
	diff := hunkOf(
		`+  items.forEach(async (item) => {`,
		`+    await notify(item);`,
		`+  });`)
	prompt := s.IntentSystem(DetectPacks("web/app.js", diff))
	for _, p := range []Pack{PackLifecycle, PackIntent} {
		if strings.Contains(prompt, packText(t, s, p)) {
			t.Errorf("prompt contains the %s pack", p)
		}
	}
	if !strings.Contains(prompt, packText(t, s, PackConcurrency)) {
		t.Error("prompt lacks the concurrency pack")
	}
	core, _ := s.File(fileIntentCore)
	if !strings.HasPrefix(prompt, core) {
		t.Error("prompt does not start with the core instructions")
	}
}

// For each pack, a diff that selects only that pack yields a prompt at least
// 30% shorter in lines than the full prompt (the design's target).
func TestSinglePackPromptsAreShorter(t *testing.T) {
	t.Parallel()
	s := mustLoad(t)
	diffs := map[Pack]struct{ path, diff string }{
		PackAuthorization: {"a.py", hunkOf(`+    q = f"DELETE FROM users WHERE id = {uid}"`)},
		PackConcurrency:   {"a.go", hunkOf(`+	go work(jobs)`)},
		PackIntent:        {"a.py", hunkOf(`+start = datetime.now()`)},
		PackLifecycle:     {"a.js", hunkOf(`+const timer = setInterval(poll, 1000);`)},
		PackRobustness:    {"a.go", hunkOf(`+	if cfg == nil {`)},
		PackMemorySafety:  {"a.rs", hunkOf(`+    let v = unsafe { *ptr };`)},
		PackResourceLeak:  {"a.go", hunkOf(`+	ctx, cancel := context.WithTimeout(parent, d)`)},
	}
	for _, p := range AllPacks {
		d := diffs[p]
		st := s.Stats(d.path, d.diff)
		if !slices.Equal(st.Packs, []Pack{p}) {
			t.Errorf("%s: diff selects %v, want only %s", p, st.Packs, p)
			continue
		}
		if st.Lines >= st.FullLines || st.Chars >= st.FullChars {
			t.Errorf("%s: prompt %d lines/%d chars is not shorter than full %d/%d", p, st.Lines, st.Chars, st.FullLines, st.FullChars)
		}
		if r := st.LineReduction(); r < 0.30 {
			t.Errorf("%s: line reduction %.2f below the 0.30 target", p, r)
		}
	}
}

func TestIntentSystemSelection(t *testing.T) {
	t.Parallel()
	s := mustLoad(t)
	full := s.IntentSystemFull()
	for _, p := range AllPacks {
		if !strings.Contains(full, packText(t, s, p)) {
			t.Errorf("full prompt lacks pack %s", p)
		}
	}
	core, _ := s.File(fileIntentCore)
	if got := s.IntentSystem(nil); got != core+"\n" {
		t.Errorf("an empty selection should give the core alone, got %d chars for a core of %d", len(got), len(core))
	}
	if got := s.IntentSystem([]Pack{"no-such-pack"}); got != core+"\n" {
		t.Error("a selection of unknown packs should give the core alone")
	}
	a := s.IntentSystem([]Pack{PackRobustness, PackConcurrency, PackRobustness})
	b := s.IntentSystem([]Pack{PackConcurrency, PackRobustness})
	if a != b {
		t.Error("pack order and duplicates change the prompt")
	}
	if strings.Count(a, packText(t, s, PackRobustness)) != 1 {
		t.Error("a duplicated pack appears more than once")
	}
	if i, j := strings.Index(a, "# Pattern pack: concurrency"), strings.Index(a, "# Pattern pack: robustness"); i < 0 || j < 0 || i > j {
		t.Errorf("packs not in canonical order (concurrency at %d, robustness at %d)", i, j)
	}
}

func TestIntentChunkedSystem(t *testing.T) {
	t.Parallel()
	s := mustLoad(t)
	chunked, _ := s.File(fileIntentChunked)
	got := s.IntentChunkedSystem([]Pack{PackIntent})
	if !strings.Contains(got, chunked) || !strings.Contains(got, packText(t, s, PackIntent)) {
		t.Error("chunked prompt lacks the chunked rules or the selected pack")
	}
	if strings.Contains(got, packText(t, s, PackLifecycle)) {
		t.Error("chunked prompt carries a pack that was not selected")
	}
	if strings.Contains(s.IntentSystem([]Pack{PackIntent}), chunked) {
		t.Error("per-file prompt carries the chunked rules")
	}
	none := s.IntentChunkedSystem(nil)
	if !strings.Contains(none, chunked) {
		t.Error("chunked prompt without packs lacks the chunked rules")
	}
	for _, p := range AllPacks {
		if strings.Contains(none, packText(t, s, p)) {
			t.Errorf("chunked prompt without packs carries the %s pack", p)
		}
	}
}

func TestExpertSystem(t *testing.T) {
	t.Parallel()
	s := mustLoad(t)
	expert, _ := s.File(fileExpert)
	orm, _ := s.File(referenceFile(RefORMQueries))
	nullable, _ := s.File(referenceFile(RefOptionalNullable))
	for _, risk := range review.RiskTypes {
		focus, ok := s.File(focusFile(risk))
		if !ok {
			t.Errorf("no focus paragraph for %s", risk)
			continue
		}
		got := s.ExpertSystem(risk, nil)
		if !strings.HasPrefix(got, expert) || !strings.Contains(got, focus) {
			t.Errorf("%s: expert prompt lacks the instructions or its focus", risk)
		}
		for _, other := range review.RiskTypes {
			if other == risk {
				continue
			}
			if text, _ := s.File(focusFile(other)); strings.Contains(got, text) {
				t.Errorf("%s: expert prompt carries the %s focus", risk, other)
			}
		}
		if strings.Contains(got, orm) || strings.Contains(got, nullable) {
			t.Errorf("%s: references included without being asked for", risk)
		}
	}
	got := s.ExpertSystem(review.Robustness, []string{RefORMQueries, "no_such_ref", RefOptionalNullable, RefORMQueries})
	i, j := strings.Index(got, nullable), strings.Index(got, orm)
	if i < 0 || j < 0 || i > j || strings.Count(got, orm) != 1 {
		t.Errorf("references missing, duplicated or out of order (nullable at %d, orm at %d)", i, j)
	}
	if got := s.ExpertSystem("no-such-risk", nil); got != expert+"\n" {
		t.Error("an unknown risk type should give the bare expert instructions")
	}
}

func TestStageSystemsAreDistinct(t *testing.T) {
	t.Parallel()
	s := mustLoad(t)
	prompts := map[string]string{
		"verify": s.VerifySystem(0.3),
		"eval":   s.EvalSystem(),
		"expert": s.ExpertSystem(review.Intent, nil),
		"intent": s.IntentSystemFull(),
	}
	for name, p := range prompts {
		if len(p) < 500 {
			t.Errorf("%s prompt is only %d bytes", name, len(p))
		}
		for other, q := range prompts {
			if other != name && p == q {
				t.Errorf("%s and %s prompts are identical", name, other)
			}
		}
	}
}
