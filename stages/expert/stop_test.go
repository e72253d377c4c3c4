package expert

import (
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/agent"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// The verdict stored with a run agrees with its stop reason, whatever the
// model submitted: "accepted" only next to a conclusion, "inconclusive"
// and the stops without an accepted verdict next to inconclusive, a
// failed run next to failed (the report's JSON schema states the same).
func TestStopReasonAgreesWithVerdict(t *testing.T) {
	t.Parallel()
	want := map[agent.StopReason]string{
		agent.StopInconclusive:      review.VerdictInconclusive,
		agent.StopAcceptCheckFailed: review.VerdictInconclusive,
		agent.StopRepeatCycle:       review.VerdictInconclusive,
		agent.StopMissingCompletion: review.VerdictInconclusive,
		agent.StopBudgetExhausted:   review.VerdictInconclusive,
		agent.StopTimeout:           review.VerdictFailed,
		agent.StopError:             review.VerdictFailed,
	}
	for _, submitted := range []string{review.VerdictConfirmed, review.VerdictRefuted, review.VerdictInconclusive, ""} {
		for stop, verdict := range want {
			_, got := Apply(0.8, 0.3, agent.Result{StopReason: stop, Verdict: submitted, Confidence: 0.9})
			if got != verdict {
				t.Errorf("%s with %q submitted: verdict %s, want %s", stop, submitted, got, verdict)
			}
		}
	}
	for _, submitted := range []string{review.VerdictConfirmed, review.VerdictRefuted} {
		if _, got := Apply(0.8, 0.3, agent.Result{StopReason: agent.StopAccepted, Verdict: submitted, Confidence: 0.9}); got != submitted {
			t.Errorf("accepted %s: verdict %s", submitted, got)
		}
	}
	// An inconclusive verdict the gate let through is not "accepted" and
	// reads as its own stop reason in the verdict's reason.
	res := agent.Result{StopReason: agent.StopInconclusive, Verdict: review.VerdictInconclusive, Reasoning: "cannot tell"}
	if r := reason(res); r != "cannot tell" {
		t.Errorf("reason = %q", r)
	}
	if r := reason(agent.Result{StopReason: agent.StopAcceptCheckFailed, Reasoning: "x"}); r != "[accept_check_failed] x" {
		t.Errorf("reason = %q", r)
	}
}
