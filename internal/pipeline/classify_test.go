package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5/pgconn"
	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llm"
	"github.com/reviewfleet/reviewfleet/store"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	api := func(code int, msg string) error {
		return &llm.EndpointError{Err: fmt.Errorf("chat completion: %w", &openai.APIError{HTTPStatusCode: code, Message: msg})}
	}
	rateLimited := &llm.EndpointError{Err: &llm.RateLimitError{RetryAfter: 3 * time.Second, Err: &openai.APIError{HTTPStatusCode: 429}}}
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name string
		err  error
		want Class
	}{
		{"no error", nil, ClassNone},
		{"closed by another delivery", fmt.Errorf("finish item: %w", store.ErrItemClosed), ClassNone},
		{"cancelled", fmt.Errorf("expert run: %w", context.Canceled), ClassInfra},
		{"cancelled during a provider call", &llm.EndpointError{Err: fmt.Errorf("send: %w", context.Canceled)}, ClassInfra},
		{"lease expired", asynq.ErrLeaseExpired, ClassInfra},
		{"postgres down", fmt.Errorf("get item: %w", &pgconn.ConnectError{}), ClassInfra},
		{"postgres shutting down", &pgconn.PgError{Code: "57P01"}, ClassInfra},
		{"postgres connection lost", &pgconn.PgError{Code: "08006"}, ClassInfra},
		{"pool closed", errors.New("record: closed pool"), ClassInfra},
		{"redis refused", fmt.Errorf("enqueue: %w", dial), ClassInfra},
		{"rate limited", rateLimited, ClassRateLimited},
		{"401", api(401, "invalid api key"), ClassPermanent},
		{"403", api(403, "forbidden"), ClassPermanent},
		{"insufficient quota", api(400, "insufficient_quota"), ClassPermanent},
		{"context length", api(400, "context_length_exceeded"), ClassPermanent},
		{"quota spent, answered as 429", &llm.EndpointError{Err: &openai.APIError{HTTPStatusCode: 429, Code: "insufficient_quota"}}, ClassPermanent},
		{"invalid reply after repair", &llm.InvalidReplyError{Reason: "not JSON"}, ClassPermanent},
		{"budget spent", fmt.Errorf("reserve: %w", llm.ErrBudgetExceeded), ClassPermanent},
		{"marked permanent", Permanent(errors.New("file missing")), ClassPermanent},
		{"skip retry", fmt.Errorf("bad payload: %w", asynq.SkipRetry), ClassPermanent},
		{"provider 500", api(500, "boom"), ClassItem},
		{"provider unreachable", &llm.EndpointError{Err: dial}, ClassItem},
		{"unknown", errors.New("something odd"), ClassItem},
		// OS errors by cause: syscall.Errno satisfies net.Error, so only
		// the errno tells a refusing disk from a service that is away.
		{"cache read-only", fmt.Errorf("snapshot cache not writable: %w", &os.PathError{Op: "mkdir", Path: "/c", Err: syscall.EROFS}), ClassItem},
		{"cache full", &os.PathError{Op: "write", Path: "/c/f", Err: syscall.ENOSPC}, ClassItem},
		{"permission", &os.PathError{Op: "open", Path: "/c/f", Err: syscall.EACCES}, ClassItem},
		{"missing path", &os.PathError{Op: "open", Path: "/c/f", Err: syscall.ENOENT}, ClassItem},
		{"rename on read-only", &os.LinkError{Op: "rename", Old: "/a", New: "/b", Err: syscall.EROFS}, ClassItem},
		{"out of descriptors", os.NewSyscallError("pipe2", syscall.EMFILE), ClassItem},
		{"redis reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, ClassInfra},
		{"redis refused, as the syscall says", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, ClassInfra},
		{"dns", fmt.Errorf("dial: %w", &net.DNSError{Err: "no such host", Name: "db"}), ClassInfra},
		{"network read timeout", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, ClassInfra},
	} {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("%s: Classify(%v) = %s, want %s", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestIsFailureCountsOnlyTheItemsFaults(t *testing.T) {
	t.Parallel()
	if IsFailure(context.Canceled) || IsFailure(&llm.RateLimitError{Err: errors.New("429")}) || IsFailure(asynq.ErrLeaseExpired) {
		t.Error("cancellation, rate limits and a lost lease must not use up attempts")
	}
	if !IsFailure(errors.New("reply failed")) || !IsFailure(Permanent(errors.New("x"))) {
		t.Error("the item's own faults count")
	}
}
