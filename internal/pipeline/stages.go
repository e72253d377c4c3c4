package pipeline

import (
	"context"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// Steps is the pipeline, every step in the order a review runs them. The
// worker's handlers and queues, the order of a review's stages, the task
// types a payload may name, the queue weights and the progress line all
// come from this table.
//
// Task types and queue names are permanent identifiers: tasks already in
// Redis and the deployment's queue-length triggers name them, so an entry's
// strings never change once released.
var Steps = []Step{
	{
		Stage: review.StageIntent, Kind: KindTask, FanOut: FanOutFileGroup,
		Type: "review:intent", Queue: "reviewfleet:intent", BulkQueue: "reviewfleet:bulk:intent", Weight: 1,
		Impl: "stages/intent",
		Doc:  "reads each group of changed files and raises candidate findings",
	},
	{
		// The manager has no task: a review leaves intent only once, in one
		// transaction, and the manager's decisions are written in that same
		// transaction, so no finding is verified before it was triaged.
		Stage: review.StageManager, Kind: KindTransition, Transition: (*Pipeline).runManager,
		Impl: "stages/manager",
		Doc:  "dedupes, anchors, scores and caps the candidates when the review leaves intent",
	},
	{
		Stage: review.StageVerify, Kind: KindTask, FanOut: FanOutFinding,
		Type: "review:verify", Queue: "reviewfleet:verify", BulkQueue: "reviewfleet:bulk:verify", Weight: 2,
		Impl: "stages/verify",
		Doc:  "checks that each finding's quote and lines are in the code",
	},
	{
		Stage: review.StageExpert, Kind: KindTask, FanOut: FanOutFinding,
		Type: "review:expert", Queue: "reviewfleet:expert", BulkQueue: "reviewfleet:bulk:expert", Weight: 3,
		Impl: "stages/expert",
		Doc:  "investigates each finding with tools over the head snapshot",
	},
	{
		Stage: review.StageEval, Kind: KindTask, FanOut: FanOutFinding,
		Type: "review:eval", Queue: "reviewfleet:eval", BulkQueue: "reviewfleet:bulk:eval", Weight: 4,
		Impl: "stages/eval",
		Doc:  "cross-examines each finding the expert confirmed",
	},
	{
		Stage: review.StageReport, Kind: KindTask, FanOut: FanOutOne,
		Type: "review:report", Queue: "reviewfleet:report", BulkQueue: "reviewfleet:bulk:report", Weight: 5,
		Impl: "stages/report",
		Doc:  "writes the review's report",
	},
}

// Kind says how a step runs.
type Kind int

const (
	// KindTask steps run as asynq tasks, one per ledger item, on any worker.
	KindTask Kind = iota
	// KindTransition steps are deterministic and run inside the transaction
	// that moves a review past the task step before them; they have no
	// task type, queue or ledger items of their own.
	KindTransition
)

// FanOut says how many ledger items (and so tasks) a task step makes.
type FanOut int

const (
	// FanOutNone is a transition step's: it makes no items.
	FanOutNone FanOut = iota
	// FanOutFileGroup is one item per group of changed files.
	FanOutFileGroup
	// FanOutFinding is one item per finding that goes on to the step.
	FanOutFinding
	// FanOutOne is a single item per review.
	FanOutOne
)

// Step is one step of the pipeline.
type Step struct {
	Stage review.Stage
	Kind  Kind
	// FanOut is how many items a task step makes.
	FanOut FanOut
	// Type is a task step's asynq task type.
	Type string
	// Queue and BulkQueue are where a task step's tasks go for an
	// interactive and for a bulk review.
	Queue, BulkQueue string
	// Weight orders the queues: later steps weigh more, so finishing the
	// reviews in flight beats starting new ones. Interactive queues weigh
	// InteractiveFactor times their bulk queue.
	Weight int
	// Transition runs a transition step inside the transaction that moves
	// the review past the step before it, with the review's settings.
	Transition func(p *Pipeline, ctx context.Context, tx *store.Tx, cfg config.Config) error
	// Impl is the package that implements the step (its StageHandler, or
	// the logic its Transition runs).
	Impl string
	// Doc says what the step does.
	Doc string
}

// InteractiveFactor is how much more an interactive queue weighs than the
// bulk queue of the same step, so that a waiting interactive task is almost
// always the next one a worker takes while bulk work still progresses.
const InteractiveFactor = 10

// Job is what the generic handler loaded for a task before handing it to
// the step: the step works from these and does not load them again.
type Job struct {
	Payload Payload
	// Review is the review the task belongs to, running when loaded.
	Review review.Review
	// Config is the review's settings (Settings(Review)).
	Config config.Config
	// Item is the task's ledger item, pending when loaded.
	Item review.Item
}

// StageHandler is what a task step implements: do one ledger item's work
// and record its result through the store (closing the item). Returning
// an error leaves the item pending; see WorkerHandler for what the error
// decides.
type StageHandler interface {
	Work(ctx context.Context, j Job) error
}

// WorkFunc adapts a function to StageHandler.
type WorkFunc func(ctx context.Context, j Job) error

// Work calls f.
func (f WorkFunc) Work(ctx context.Context, j Job) error { return f(ctx, j) }

// TaskSteps returns the steps that run as tasks, in pipeline order.
func TaskSteps() []Step {
	var out []Step
	for _, s := range Steps {
		if s.Kind == KindTask {
			out = append(out, s)
		}
	}
	return out
}

// StepOf returns the step of a stage.
func StepOf(stage review.Stage) (Step, bool) {
	for _, s := range Steps {
		if s.Stage == stage {
			return s, true
		}
	}
	return Step{}, false
}

// TaskStages lists the stages that run as tasks, in pipeline order.
var TaskStages = func() []review.Stage {
	var out []review.Stage
	for _, s := range TaskSteps() {
		out = append(out, s.Stage)
	}
	return out
}()

// FindingStages lists, in pipeline order, the task stages with an item
// per finding: those that judge a finding after intent raised it.
func FindingStages() []review.Stage {
	var out []review.Stage
	for _, s := range TaskSteps() {
		if s.FanOut == FanOutFinding {
			out = append(out, s.Stage)
		}
	}
	return out
}

// transitionsAfter returns the transition steps between the task step
// from and the next task step.
func transitionsAfter(from review.Stage) []Step {
	var out []Step
	after := false
	for _, s := range Steps {
		switch {
		case s.Stage == from:
			after = true
		case after && s.Kind == KindTask:
			return out
		case after:
			out = append(out, s)
		}
	}
	return out
}
