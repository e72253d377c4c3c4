package agent

import (
	"fmt"
	"math"
)

// Metrics is a snapshot of the exploration that transition rules decide on.
type Metrics struct {
	Phase              Phase
	Round              int  // model calls so far, this round included
	PhaseRounds        int  // rounds spent in the current phase
	UniqueFiles        int  // distinct files read
	UniquePatterns     int  // distinct grep pattern and glob pairs
	UniqueQueries      int  // distinct find_symbol names and list_dir paths
	SearchCalls        int  // grep, find_symbol and list_dir calls made
	RoundsSinceNewInfo int  // rounds in a row that brought nothing new
	CitedFileRead      bool // the file the finding cites has been read
	MaxRounds          int
	SearchBudget       int
	ConvergenceRounds  int
	BudgetWarningRound int // the round from which the budget warning applies
}

// Transition is a phase transition rule: at the end of a round in phase
// From, the first rule whose When holds moves the run to phase To.
type Transition struct {
	From, To Phase
	Reason   string
	When     func(Metrics) bool
}

// DefaultTransitions are the rules used when Config.Transitions is nil:
// explore → verify once the cited file has been read and nothing new turned
// up for ConvergenceRounds rounds, or the search budget is spent; verify →
// summarize when nothing new turned up for ConvergenceRounds rounds of
// verification, or the budget warning round is reached.
func DefaultTransitions() []Transition {
	return []Transition{
		{
			From: PhaseExplore, To: PhaseVerify, Reason: "cited file read and exploration saturated",
			When: func(m Metrics) bool { return m.CitedFileRead && m.RoundsSinceNewInfo >= m.ConvergenceRounds },
		},
		{
			From: PhaseExplore, To: PhaseVerify, Reason: "search budget spent",
			When: func(m Metrics) bool { return m.SearchCalls >= m.SearchBudget },
		},
		{
			From: PhaseVerify, To: PhaseSummarize, Reason: "verification saturated",
			When: func(m Metrics) bool { return m.RoundsSinceNewInfo >= m.ConvergenceRounds },
		},
		{
			From: PhaseVerify, To: PhaseSummarize, Reason: "round budget nearly spent",
			When: func(m Metrics) bool { return m.Round >= m.BudgetWarningRound },
		},
	}
}

// nudgeKind names the messages the tracker injects.
type nudgeKind string

const (
	nudgeNone          nudgeKind = ""
	nudgeTransition    nudgeKind = "phase_transition"
	nudgeBudgetWarning nudgeKind = "budget_warning"
	nudgeConvergence   nudgeKind = "convergence"
	nudgeReflection    nudgeKind = "reflection"
	nudgeForced        nudgeKind = "forced_summarize"
)

// tracker follows the exploration: its phase, its budgets and whether each
// round brought new information, and decides which nudge, if any, the model
// gets.
type tracker struct {
	cfg       Config
	citedFile string

	phase              Phase
	round, phaseRounds int
	searchCalls        int
	roundsSinceNewInfo int
	roundHadNewInfo    bool
	files              map[string]bool
	patterns           map[string]bool
	queries            map[string]bool
	citedRead          bool
	changes            []PhaseChange

	transitioned      bool // a transition happened in this round
	budgetWarned      bool
	convergenceWarned bool
	forced            bool
	forcedAt          int
}

func newTracker(cfg Config, citedFile string) *tracker {
	cited, err := cleanRel(citedFile)
	if err != nil {
		cited = ""
	}
	return &tracker{
		cfg: cfg, citedFile: cited, phase: PhaseExplore,
		files: map[string]bool{}, patterns: map[string]bool{}, queries: map[string]bool{},
	}
}

func (t *tracker) budgetWarningRound() int {
	return max(1, int(math.Ceil(t.cfg.BudgetWarningAt*float64(t.cfg.MaxRounds))))
}

func (t *tracker) metrics() Metrics {
	return Metrics{
		Phase: t.phase, Round: t.round, PhaseRounds: t.phaseRounds,
		UniqueFiles: len(t.files), UniquePatterns: len(t.patterns), UniqueQueries: len(t.queries),
		SearchCalls: t.searchCalls, RoundsSinceNewInfo: t.roundsSinceNewInfo, CitedFileRead: t.citedRead,
		MaxRounds: t.cfg.MaxRounds, SearchBudget: t.cfg.SearchBudget, ConvergenceRounds: t.cfg.ConvergenceRounds,
		BudgetWarningRound: t.budgetWarningRound(),
	}
}

// beginRound starts a round.
func (t *tracker) beginRound() {
	t.round++
	t.phaseRounds++
	t.roundHadNewInfo = false
	t.transitioned = false
}

// searchesLeft is how many search calls the budget still allows.
func (t *tracker) searchesLeft() int { return max(0, t.cfg.SearchBudget-t.searchCalls) }

// recordSearch counts a search call that was executed.
func (t *tracker) recordSearch() { t.searchCalls++ }

// recordRead notes a successful read of rel.
func (t *tracker) recordRead(rel string) {
	if !t.files[rel] {
		t.files[rel] = true
		t.roundHadNewInfo = true
	}
	if rel == t.citedFile {
		t.citedRead = true
	}
}

// recordPattern notes a successful grep.
func (t *tracker) recordPattern(pattern, glob string) {
	if k := pattern + "\x00" + glob; !t.patterns[k] {
		t.patterns[k] = true
		t.roundHadNewInfo = true
	}
}

// recordQuery notes a successful find_symbol or list_dir.
func (t *tracker) recordQuery(q string) {
	if !t.queries[q] {
		t.queries[q] = true
		t.roundHadNewInfo = true
	}
}

// endRound updates the new-information counters and applies the first
// matching transition rule.
func (t *tracker) endRound() {
	if t.roundHadNewInfo {
		t.roundsSinceNewInfo = 0
		t.convergenceWarned = false
	} else {
		t.roundsSinceNewInfo++
	}
	if t.forced {
		return
	}
	m := t.metrics()
	for _, r := range t.cfg.Transitions {
		if r.From == t.phase && r.When != nil && r.When(m) {
			t.transition(r.To, r.Reason)
			return
		}
	}
}

func (t *tracker) transition(to Phase, reason string) {
	if to == t.phase {
		return
	}
	t.changes = append(t.changes, PhaseChange{From: t.phase, To: to, Round: t.round, Reason: reason})
	t.phase = to
	t.phaseRounds = 0
	// A new phase starts its own stagnation count, so one phase's quiet
	// rounds do not cascade into the next transition.
	t.roundsSinceNewInfo = 0
	t.convergenceWarned = false
	t.transitioned = true
}

// takeNudge returns the most important nudge due this round, by priority
// phase transition, budget warning, convergence, reflection, and marks it
// delivered. A budget warning that loses to a transition waits for the
// next round; convergence stays due until delivered.
func (t *tracker) takeNudge() (nudgeKind, string) {
	m := t.metrics()
	switch {
	case t.forced:
		return nudgeNone, ""
	case t.transitioned:
		t.transitioned = false
		return nudgeTransition, transitionNudge(m)
	case !t.budgetWarned && t.round >= m.BudgetWarningRound:
		t.budgetWarned = true
		return nudgeBudgetWarning, budgetWarningNudge(m)
	case !t.convergenceWarned && t.roundsSinceNewInfo >= t.cfg.ConvergenceRounds:
		t.convergenceWarned = true
		return nudgeConvergence, convergenceNudge(m)
	case t.round%t.cfg.ReflectionEvery == 0:
		return nudgeReflection, reflectionNudge(m)
	}
	return nudgeNone, ""
}

// forceSummarize enters the graceful exit: from now on the model may only
// submit its verdict, for GracefulExitRounds rounds.
func (t *tracker) forceSummarize() string {
	t.transition(PhaseSummarize, "round budget spent")
	t.transitioned = false
	t.forced = true
	t.forcedAt = t.round
	return forcedNudge(t.cfg.GracefulExitRounds)
}

// hardStop reports whether the graceful exit is over.
func (t *tracker) hardStop() bool {
	return t.forced && t.round >= t.forcedAt+t.cfg.GracefulExitRounds
}

// phaseLine is the status line that heads every nudge.
func phaseLine(m Metrics) string {
	return fmt.Sprintf("[phase %s · round %d of %d · %d searches left]",
		m.Phase, m.Round, m.MaxRounds, max(0, m.SearchBudget-m.SearchCalls))
}
