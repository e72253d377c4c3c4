package pipeline

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

func TestChain(t *testing.T) {
	t.Parallel()
	cases := []struct {
		skipped []string
		want    []review.Stage
	}{
		{nil, []review.Stage{"intent", "verify", "expert", "eval", "report", "done"}},
		{[]string{"verify"}, []review.Stage{"intent", "expert", "eval", "report", "done"}},
		{[]string{"verify", "eval"}, []review.Stage{"intent", "expert", "report", "done"}},
	}
	for _, c := range cases {
		if got := Chain(c.skipped); !slices.Equal(got, c.want) {
			t.Errorf("Chain(%v) = %v, want %v", c.skipped, got, c.want)
		}
	}
	if next(Chain(nil), review.StageReport) != review.StageDone || next(Chain([]string{"eval"}), review.StageExpert) != review.StageReport {
		t.Error("next stage wrong")
	}
}

func TestSkippedStages(t *testing.T) {
	t.Parallel()
	h := config.Default().Harness
	if len(SkippedStages(h)) != 0 {
		t.Fatal("defaults skip nothing")
	}
	h.VerifyEnabled, h.EvalEnabled = false, false
	if got := SkippedStages(h); !slices.Equal(got, []string{"verify", "eval"}) {
		t.Fatalf("got %v", got)
	}
}

func TestQueuesWeightLaterStagesHigher(t *testing.T) {
	t.Parallel()
	w := QueueWeights()
	for i := 1; i < len(TaskStages); i++ {
		if w[Queue(TaskStages[i])] <= w[Queue(TaskStages[i-1])] {
			t.Errorf("%s is not weighted above %s", TaskStages[i], TaskStages[i-1])
		}
	}
}

func TestTaskRoundTrip(t *testing.T) {
	t.Parallel()
	p := Payload{ReviewID: "r1", Stage: review.StageVerify, Item: "f12"}
	task, err := NewTask(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if task.Type() != "review:verify" {
		t.Fatalf("type %s", task.Type())
	}
	got, err := DecodePayload(task)
	if err != nil || got != p {
		t.Fatalf("decode: %+v %v", got, err)
	}
	if TaskID("r1", review.StageVerify, "f12") != "r1:verify:f12" {
		t.Fatal("task id")
	}
	for _, bad := range []*asynq.Task{
		asynq.NewTask("review:verify", []byte("{")),
		asynq.NewTask("review:verify", []byte(`{"review_id":"r","stage":"eval","item":"f1"}`)),
		asynq.NewTask("review:verify", []byte(`{"review_id":"","stage":"verify","item":"f1"}`)),
	} {
		if _, err := DecodePayload(bad); !errors.Is(err, asynq.SkipRetry) {
			t.Errorf("payload %s: %v, want a permanent failure", bad.Payload(), err)
		}
	}
	if s, ok := StageFromTaskType("review:eval"); !ok || s != review.StageEval {
		t.Fatal("stage from type")
	}
}

func TestFindingKey(t *testing.T) {
	t.Parallel()
	id, err := ParseFindingKey(FindingKey(42))
	if err != nil || id != 42 {
		t.Fatalf("%d %v", id, err)
	}
	for _, bad := range []string{"", "f", "x1", "fabc", "report"} {
		if _, err := ParseFindingKey(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	none := func(error) (time.Duration, bool) { return 0, false }
	if RetryDelay(0, nil, none) != time.Second || RetryDelay(3, nil, none) != 8*time.Second || RetryDelay(20, nil, none) != 30*time.Second {
		t.Fatal("backoff")
	}
	rl := func(error) (time.Duration, bool) { return 7 * time.Second, true }
	if RetryDelay(0, errors.New("429"), rl) != 7*time.Second {
		t.Fatal("a rate limit waits as long as the server asked")
	}
}

func TestSnapshotDropsSecretsAndRoundTrips(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.DatabaseURL, cfg.RedisURL, cfg.LLM.APIKey, cfg.LLM.BaseURL = "postgres://u:pw@h/db", "redis://:pw@h", "sk-secret", "http://llm"
	cfg.Harness.EvalEnabled = false
	cfg.Manager.AnchorWindow = 9
	snap := Snapshot(cfg)
	for _, s := range []string{"pw@", "sk-secret", "http://llm"} {
		if strings.Contains(string(snap), s) {
			t.Errorf("snapshot carries %q", s)
		}
	}
	got := Settings(review.Review{Config: snap})
	if got.Harness.EvalEnabled || got.Manager.AnchorWindow != 9 || got.Worker.TaskCheckInterval != cfg.Worker.TaskCheckInterval {
		t.Errorf("settings did not round-trip: %+v", got)
	}
}
