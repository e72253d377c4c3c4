// Package pipeline is the glue between the stages: task payloads and type
// names, queues, deterministic task IDs, the stage chain with its toggles,
// and the fan-in that moves a review to its next stage exactly once.
package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// Payload is the body of every review task: which ledger item to work on.
type Payload struct {
	ReviewID string       `json:"review_id"`
	Stage    review.Stage `json:"stage"`
	Item     string       `json:"item"`
	// Bulk sends the task to the bulk queues (a review of a batch).
	Bulk bool `json:"bulk,omitempty"`
	// Gen is the ledger item's generation the task was made for (see
	// review.Item.Generation); a task of an older generation does nothing.
	Gen int `json:"gen,omitempty"`
	// QueuedAt is when the task was handed to the queue (Unix
	// microseconds; 0 in tasks from before it was recorded).
	QueuedAt int64 `json:"queued_at,omitempty"`
}

// WakeChannel is the Redis channel on which enqueuers announce new tasks,
// so idle workers poll their queues at once instead of at their next
// idle_poll_interval.
const WakeChannel = "reviewfleet:tasks:enqueued"

// Queued is QueuedAt as a time (zero when unknown).
func (p Payload) Queued() time.Time {
	if p.QueuedAt == 0 {
		return time.Time{}
	}
	return time.UnixMicro(p.QueuedAt)
}

// TaskType is the asynq task type of a task step, e.g. "review:intent"
// ("" for a stage that does not run as a task).
func TaskType(stage review.Stage) string { return taskStep(stage).Type }

// Queue is the asynq queue an interactive review's tasks of a step go to.
func Queue(stage review.Stage) string { return taskStep(stage).Queue }

// BulkQueue is the asynq queue a bulk review's tasks of a step go to.
func BulkQueue(stage review.Stage) string { return taskStep(stage).BulkQueue }

// taskStep is the task step of a stage (zero for any other stage).
func taskStep(stage review.Stage) Step {
	if s, ok := StepOf(stage); ok && s.Kind == KindTask {
		return s
	}
	return Step{}
}

// QueueFor is the queue of a stage's tasks for an interactive or a bulk review.
func QueueFor(stage review.Stage, bulk bool) string {
	if bulk {
		return BulkQueue(stage)
	}
	return Queue(stage)
}

// QueueWeights is every task step's queues with their weights (see
// Step.Weight and InteractiveFactor).
func QueueWeights() map[string]int {
	w := map[string]int{}
	for _, s := range TaskSteps() {
		w[s.Queue] = InteractiveFactor * s.Weight
		w[s.BulkQueue] = s.Weight
	}
	return w
}

// TaskID is the deterministic asynq task ID of a ledger item, so that a
// duplicate enqueue of the same item is rejected by the queue.
func TaskID(reviewID string, stage review.Stage, item string) string {
	return reviewID + ":" + string(stage) + ":" + item
}

// GenTaskID is TaskID for a given generation of the item: generation 0
// keeps the plain ID, later ones get a suffix so that a rescued item's new
// task does not collide with the old one still held by a dead worker.
func GenTaskID(reviewID string, stage review.Stage, item string, gen int) string {
	if gen == 0 {
		return TaskID(reviewID, stage, item)
	}
	return TaskID(reviewID, stage, item) + ":g" + strconv.Itoa(gen)
}

// NewTask builds the task for one ledger item, carrying the caller's trace
// context in its headers.
func NewTask(ctx context.Context, p Payload, opts ...asynq.Option) (*asynq.Task, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode payload: %w", err)
	}
	headers := map[string]string{}
	otel.GetTextMapPropagator().Inject(ctx, propagation.MapCarrier(headers))
	base := []asynq.Option{
		asynq.TaskID(GenTaskID(p.ReviewID, p.Stage, p.Item, p.Gen)),
		asynq.Queue(QueueFor(p.Stage, p.Bulk)),
	}
	return asynq.NewTaskWithHeaders(TaskType(p.Stage), body, headers, append(base, opts...)...), nil
}

// DecodePayload reads a task's payload. A payload that does not decode, or
// whose stage does not match the task type, is a permanent failure.
func DecodePayload(t *asynq.Task) (Payload, error) {
	var p Payload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return Payload{}, fmt.Errorf("decode %s payload: %v: %w", t.Type(), err, asynq.SkipRetry)
	}
	if st, ok := StageFromTaskType(t.Type()); !ok || p.ReviewID == "" || p.Item == "" || st != p.Stage {
		return Payload{}, fmt.Errorf("malformed %s payload %q: %w", t.Type(), t.Payload(), asynq.SkipRetry)
	}
	return p, nil
}

// ExtractTrace returns ctx carrying the trace context from a task's headers.
func ExtractTrace(ctx context.Context, t *asynq.Task) context.Context {
	if len(t.Headers()) == 0 {
		return ctx
	}
	return otel.GetTextMapPropagator().Extract(ctx, propagation.MapCarrier(t.Headers()))
}

// StageFromTaskType is the inverse of TaskType.
func StageFromTaskType(typ string) (review.Stage, bool) {
	for _, s := range TaskSteps() {
		if s.Type == typ {
			return s.Stage, true
		}
	}
	return "", false
}

// RetryDelay is the backoff between attempts of a failed task: exponential
// from 1s, capped at 30s, or the server's Retry-After for rate limits, or
// the wait an outage's give-back asked for (OutageError).
func RetryDelay(n int, err error, rateLimited func(error) (time.Duration, bool)) time.Duration {
	if d, ok := rateLimited(err); ok && d > 0 {
		return d
	}
	var oe *OutageError
	if errors.As(err, &oe) && oe.Wait > 0 {
		return oe.Wait
	}
	d := time.Second << min(n, 5)
	return min(d, 30*time.Second)
}
