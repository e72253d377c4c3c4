package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/reviewfleet/reviewfleet/internal/llm"
)

// A rate limit is logged at debug and an outage at info, so a batch against
// a busy provider does not fill the log with warnings; an item's own fault
// stays a warning naming its class.
func TestTaskErrorsAreLoggedByClass(t *testing.T) {
	t.Parallel()
	task := asynq.NewTask("review:intent", []byte(`{"review_id":"r"}`))
	cases := []struct {
		err   error
		level slog.Level
		msg   string
	}{
		{fmt.Errorf("intent item: %w", &llm.RateLimitError{RetryAfter: time.Second, Err: errors.New("429")}), slog.LevelDebug, "rate limit"},
		{fmt.Errorf("intent item: %w", context.Canceled), slog.LevelInfo, "given back"},
		{errors.New("the reply did not validate"), slog.LevelWarn, "class=item"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		logTaskError(log, task, c.err)
		out := buf.String()
		if !strings.Contains(out, "level="+c.level.String()) || !strings.Contains(out, c.msg) {
			t.Errorf("%v logged as %q, want level %s mentioning %q", c.err, out, c.level, c.msg)
		}
	}
}
