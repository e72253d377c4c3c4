package pipeline

import (
	"context"
	"errors"
	"io"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/fault"
	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/store"
)

// Class says whose fault an error of a task is, and so what becomes of its
// item. Only the item's own faults may fail it.
type Class int

// The classes, from Classify.
const (
	// ClassNone: nothing to do (no error, or the item was already closed
	// by another delivery).
	ClassNone Class = iota
	// ClassItem: the item's own fault that another attempt may fix (a
	// provider's 5xx or timeout, a reply that failed, a local disk or
	// permission refusing): retried with backoff, and the last attempt
	// fails the item.
	ClassItem
	// ClassPermanent: the item's own fault that no attempt can fix (a
	// reply that stays invalid after repair, 401/403, insufficient_quota,
	// context length, the budget spent, the input): the item fails now.
	ClassPermanent
	// ClassInfra: not the item's fault (cancellation or shutdown, asynq's
	// lease lost, Postgres or Redis unreachable): the item goes back to
	// pending without using an attempt and runs again.
	ClassInfra
	// ClassRateLimited: the provider asked to wait. Like ClassInfra it
	// uses no attempt; the review's deadline bounds the waiting.
	ClassRateLimited
)

// String names the class for logs.
func (c Class) String() string {
	switch c {
	case ClassNone:
		return "none"
	case ClassItem:
		return "item"
	case ClassPermanent:
		return "permanent"
	case ClassInfra:
		return "infra"
	case ClassRateLimited:
		return "rate_limited"
	}
	return "unknown"
}

// Classify decides whose fault err is. It is the one place the fleet
// makes that decision: the task handler, the worker's IsFailure and the
// stages all follow it.
func Classify(err error) Class {
	switch {
	case err == nil, errors.Is(err, store.ErrItemClosed):
		return ClassNone
	case errors.Is(err, context.Canceled), errors.Is(err, asynq.ErrLeaseExpired):
		return ClassInfra
	case errors.Is(err, ErrPermanent), errors.Is(err, asynq.SkipRetry):
		return ClassPermanent
	}
	if _, ok := llm.IsRateLimited(err); ok {
		return ClassRateLimited
	}
	if llm.IsPermanent(err) {
		return ClassPermanent
	}
	if llm.IsEndpoint(err) {
		return ClassItem // the provider failed this call: retried, within bounds
	}
	if _, local := fault.Resource(err); local {
		// A read-only or full disk, a permission, a missing path: waiting
		// for it is no outage. The item uses its attempts, backing off,
		// and fails with the cause named.
		return ClassItem
	}
	if unavailable(err) {
		return ClassInfra
	}
	return ClassItem
}

// IsFailure reports whether err counts against a task's attempts (asynq's
// IsFailure): only the item's own faults do.
func IsFailure(err error) bool {
	c := Classify(err)
	return c == ClassItem || c == ClassPermanent
}

// unavailable reports Postgres, Redis or the network between them being
// down.
func unavailable(err error) bool {
	return store.IsUnavailable(err) || errors.Is(err, redis.ErrClosed) || errors.Is(err, io.ErrUnexpectedEOF) ||
		fault.Network(err)
}
