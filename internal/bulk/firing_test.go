package bulk

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/testenv"
)

// A retry of a firing that lands after the schedule's next activation (a
// long org listing that failed, a backed-up queue) still belongs to the
// firing it was made for, so it resumes that batch instead of starting
// another and leaving the first half-submitted.
func TestRetryKeepsItsFiring(t *testing.T) {
	t.Parallel()
	opt, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	s := &Scheduler{rdb: rdb}
	ctx := context.Background()
	first := time.Date(2026, 3, 4, 9, 10, 2, 0, time.UTC)
	at, err := s.firingTimeOf(ctx, "*/10 * * * *", "task-1", first)
	if err != nil || !at.Equal(time.Date(2026, 3, 4, 9, 10, 0, 0, time.UTC)) {
		t.Fatalf("first attempt: %v %v", at, err)
	}
	retry, err := s.firingTimeOf(ctx, "*/10 * * * *", "task-1", first.Add(25*time.Minute))
	if err != nil || !retry.Equal(at) {
		t.Fatalf("retry 25 minutes later belongs to %v (%v), want %v", retry, err, at)
	}
	next, err := s.firingTimeOf(ctx, "*/10 * * * *", "task-2", first.Add(10*time.Minute))
	if err != nil || !next.Equal(at.Add(10*time.Minute)) {
		t.Fatalf("the next firing: %v %v", next, err)
	}
}
