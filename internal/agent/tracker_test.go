package agent

import (
	"strings"
	"testing"
)

// round plays one round on the tracker: act records the round's tool
// activity; it returns the nudge delivered at the end of the round.
func round(tr *tracker, act func()) nudgeKind {
	tr.beginRound()
	if act != nil {
		act()
	}
	tr.endRound()
	kind, _ := tr.takeNudge()
	return kind
}

func testTracker(mod func(*Config)) *tracker {
	cfg := Config{MaxRounds: 10, SearchBudget: 4, ConvergenceRounds: 2, ReflectionEvery: 100}
	if mod != nil {
		mod(&cfg)
	}
	return newTracker(cfg.withDefaults(), "./src/app.go")
}

func TestTrackerExploreToVerifyNeedsCitedFile(t *testing.T) {
	t.Parallel()
	tr := testTracker(nil)
	round(tr, func() { tr.recordRead("src/other.go") })
	// Quiet rounds without the cited file read: convergence, no transition.
	if k := round(tr, nil); k != nudgeNone {
		t.Errorf("round 2 nudge = %q, want none", k)
	}
	if k := round(tr, nil); k != nudgeConvergence {
		t.Errorf("round 3 nudge = %q, want convergence", k)
	}
	if tr.phase != PhaseExplore {
		t.Fatalf("phase = %s before the cited file was read", tr.phase)
	}
	round(tr, func() { tr.recordRead("src/app.go") })
	round(tr, nil)
	if k := round(tr, nil); k != nudgeTransition || tr.phase != PhaseVerify {
		t.Fatalf("round 6: nudge %q phase %s, want a transition to verify", k, tr.phase)
	}
	want := PhaseChange{From: PhaseExplore, To: PhaseVerify, Round: 6, Reason: "cited file read and exploration saturated"}
	if len(tr.changes) != 1 || tr.changes[0] != want {
		t.Errorf("changes = %+v, want %+v", tr.changes, want)
	}
}

func TestTrackerSearchBudgetTransition(t *testing.T) {
	t.Parallel()
	tr := testTracker(nil)
	for i := range 2 {
		round(tr, func() {
			tr.recordSearch()
			tr.recordSearch()
			tr.recordPattern("p"+string(rune('a'+i)), "")
		})
	}
	if tr.phase != PhaseVerify || tr.searchesLeft() != 0 {
		t.Fatalf("phase %s with %d searches left, want verify with none", tr.phase, tr.searchesLeft())
	}
	if tr.changes[0].Reason != "search budget spent" || tr.changes[0].Round != 2 {
		t.Errorf("change = %+v", tr.changes[0])
	}
}

func TestTrackerNewInformationSignals(t *testing.T) {
	t.Parallel()
	tr := testTracker(nil)
	acts := []struct {
		act  func()
		want int // rounds since new info after the round
	}{
		{func() { tr.recordRead("a.go") }, 0},
		{func() { tr.recordRead("a.go") }, 1},
		{func() { tr.recordPattern("x", "**") }, 0},
		{func() { tr.recordPattern("x", "**") }, 1},
		{func() { tr.recordPattern("x", "src/**") }, 0},
		{func() { tr.recordQuery("symbol:X") }, 0},
		{func() { tr.recordQuery("symbol:X") }, 1},
		{func() { tr.recordSearch() }, 2}, // a search by itself is not information
	}
	for i, a := range acts {
		round(tr, a.act)
		if tr.roundsSinceNewInfo != a.want {
			t.Errorf("round %d: rounds since new info = %d, want %d", i+1, tr.roundsSinceNewInfo, a.want)
		}
	}
	m := tr.metrics()
	if m.UniqueFiles != 1 || m.UniquePatterns != 2 || m.UniqueQueries != 1 {
		t.Errorf("metrics = %+v", m)
	}
}

func TestTrackerNudgePriorityAndOnePerRound(t *testing.T) {
	t.Parallel()
	// Budget warning due at round 3; a transition in round 3 takes the slot
	// and the warning follows in round 4.
	tr := testTracker(func(c *Config) {
		c.BudgetWarningAt = 0.3
		c.Transitions = []Transition{{From: PhaseExplore, To: PhaseVerify, Reason: "round 3",
			When: func(m Metrics) bool { return m.Round == 3 }}}
	})
	var got []nudgeKind
	for range 5 {
		got = append(got, round(tr, func() { tr.recordQuery(strings.Repeat("q", tr.round)) }))
	}
	want := []nudgeKind{nudgeNone, nudgeNone, nudgeTransition, nudgeBudgetWarning, nudgeNone}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("round %d nudge = %q, want %q (all: %v)", i+1, got[i], want[i], got)
		}
	}
}

func TestTrackerReflection(t *testing.T) {
	t.Parallel()
	tr := testTracker(func(c *Config) { c.ReflectionEvery = 3; c.MaxRounds = 100 })
	var at []int
	for range 9 {
		if round(tr, func() { tr.recordRead(strings.Repeat("f", tr.round)) }) == nudgeReflection {
			at = append(at, tr.round)
		}
	}
	if len(at) != 3 || at[0] != 3 || at[1] != 6 || at[2] != 9 {
		t.Errorf("reflections at rounds %v, want 3, 6, 9", at)
	}
}

func TestTrackerForcedSummarizeAndHardStop(t *testing.T) {
	t.Parallel()
	tr := testTracker(func(c *Config) { c.MaxRounds = 3; c.GracefulExitRounds = 2 })
	for range 3 {
		round(tr, func() { tr.recordRead(strings.Repeat("f", tr.round)) })
	}
	text := tr.forceSummarize()
	if !strings.Contains(text, "stops in 2 rounds") || tr.phase != PhaseSummarize || !tr.forced {
		t.Fatalf("forceSummarize: %q phase %s forced %v", text, tr.phase, tr.forced)
	}
	last := tr.changes[len(tr.changes)-1]
	if last.To != PhaseSummarize || last.Round != 3 || last.Reason != "round budget spent" {
		t.Errorf("last change = %+v", last)
	}
	for i := range 2 {
		if tr.hardStop() {
			t.Fatalf("hard stop before graceful round %d", i+1)
		}
		if k := round(tr, nil); k != nudgeNone {
			t.Errorf("graceful round %d nudge = %q, want none", i+1, k)
		}
	}
	if !tr.hardStop() {
		t.Error("no hard stop after the graceful rounds")
	}
}
