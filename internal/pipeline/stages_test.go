package pipeline

import (
	"errors"
	"slices"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// The table is the pipeline: every stage in it once, in review order, with
// the task types and queues that tasks already in Redis and the deployed
// queue triggers name.
func TestStepsTableIsCompleteAndConsistent(t *testing.T) {
	t.Parallel()
	// Permanent identifiers, written out: a table edit that renames one
	// strands the tasks queued under the old name.
	historical := map[review.Stage][3]string{
		review.StageIntent: {"review:intent", "reviewfleet:intent", "reviewfleet:bulk:intent"},
		review.StageVerify: {"review:verify", "reviewfleet:verify", "reviewfleet:bulk:verify"},
		review.StageExpert: {"review:expert", "reviewfleet:expert", "reviewfleet:bulk:expert"},
		review.StageEval:   {"review:eval", "reviewfleet:eval", "reviewfleet:bulk:eval"},
		review.StageReport: {"review:report", "reviewfleet:report", "reviewfleet:bulk:report"},
	}
	order := []review.Stage{review.StageIntent, review.StageManager, review.StageVerify, review.StageExpert, review.StageEval, review.StageReport}
	var got []review.Stage
	for _, s := range Steps {
		got = append(got, s.Stage)
	}
	if !slices.Equal(got, order) {
		t.Fatalf("steps %v, want %v", got, order)
	}

	types, queues := map[string]bool{}, map[string]bool{}
	weights := QueueWeights()
	prev := 0
	for _, s := range Steps {
		if s.Impl == "" || s.Doc == "" {
			t.Errorf("%s: no implementation or doc", s.Stage)
		}
		switch s.Kind {
		case KindTask:
			want, ok := historical[s.Stage]
			if !ok {
				t.Errorf("%s runs as a task but has no released task type", s.Stage)
				continue
			}
			if [3]string{s.Type, s.Queue, s.BulkQueue} != want {
				t.Errorf("%s: type and queues %q %q %q, want %q", s.Stage, s.Type, s.Queue, s.BulkQueue, want)
			}
			if s.FanOut == FanOutNone || s.Transition != nil {
				t.Errorf("%s: a task step with no items or with a transition", s.Stage)
			}
			if types[s.Type] || queues[s.Queue] || queues[s.BulkQueue] || s.Queue == s.BulkQueue {
				t.Errorf("%s: task type or queue used twice", s.Stage)
			}
			types[s.Type], queues[s.Queue], queues[s.BulkQueue] = true, true, true
			if s.Weight <= prev {
				t.Errorf("%s weighs %d, not more than the step before it (%d)", s.Stage, s.Weight, prev)
			}
			prev = s.Weight
			if weights[s.Queue] <= weights[s.BulkQueue] || weights[s.BulkQueue] <= 0 {
				t.Errorf("%s: queue weights %d (interactive) %d (bulk)", s.Stage, weights[s.Queue], weights[s.BulkQueue])
			}
			if TaskType(s.Stage) != s.Type || QueueFor(s.Stage, false) != s.Queue || QueueFor(s.Stage, true) != s.BulkQueue {
				t.Errorf("%s: lookups disagree with the table", s.Stage)
			}
			if st, ok := StageFromTaskType(s.Type); !ok || st != s.Stage {
				t.Errorf("%s: task type %s maps back to %q", s.Stage, s.Type, st)
			}
		case KindTransition:
			if s.Type != "" || s.Queue != "" || s.BulkQueue != "" || s.Weight != 0 || s.FanOut != FanOutNone || s.Transition == nil {
				t.Errorf("%s: a transition step with a task, queue or items, or nothing to run", s.Stage)
			}
			if TaskType(s.Stage) != "" || Queue(s.Stage) != "" {
				t.Errorf("%s: lookups give a transition step a task type or queue", s.Stage)
			}
		default:
			t.Errorf("%s: unknown kind %d", s.Stage, s.Kind)
		}
	}
	if len(types) != len(historical) || len(weights) != 2*len(historical) {
		t.Errorf("%d task types and %d weighted queues for %d task steps", len(types), len(weights), len(historical))
	}
	for q := range weights {
		if !queues[q] {
			t.Errorf("weighted queue %s belongs to no step", q)
		}
	}
	if !slices.Equal(TaskStages, []review.Stage{review.StageIntent, review.StageVerify, review.StageExpert, review.StageEval, review.StageReport}) {
		t.Errorf("task stages %v", TaskStages)
	}
	if got := FindingStages(); !slices.Equal(got, []review.Stage{review.StageVerify, review.StageExpert, review.StageEval}) {
		t.Errorf("finding stages %v", got)
	}
}

// The manager runs when a review leaves intent, and only then.
func TestManagerRunsOnLeavingIntent(t *testing.T) {
	t.Parallel()
	for _, s := range TaskStages {
		var got []review.Stage
		for _, tr := range transitionsAfter(s) {
			got = append(got, tr.Stage)
		}
		want := []review.Stage(nil)
		if s == review.StageIntent {
			want = []review.Stage{review.StageManager}
		}
		if !slices.Equal(got, want) {
			t.Errorf("leaving %s runs %v, want %v", s, got, want)
		}
	}
}

// Stages that run no task have no task type: a task claiming one is
// refused for good.
func TestPayloadOfAStepWithoutTaskIsRefused(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"review:manager", "review:done", "review:"} {
		task := asynq.NewTask(typ, []byte(`{"review_id":"r","stage":"`+typ[len("review:"):]+`","item":"x"}`))
		if _, err := DecodePayload(task); !errors.Is(err, asynq.SkipRetry) {
			t.Errorf("%s: %v, want a permanent failure", typ, err)
		}
	}
}
