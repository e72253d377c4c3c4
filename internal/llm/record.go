package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmparts"
)

// Record statuses.
const (
	StatusOK             = "ok"
	StatusRateLimited    = "rate_limited"
	StatusError          = "error"
	StatusInvalidReply   = "invalid_reply"
	StatusBudgetExceeded = "budget_exceeded"
)

// HTTPStatus is the record status of an HTTP error reply, such as "http_500".
func HTTPStatus(code int) string { return fmt.Sprintf("http_%d", code) }

// Recorder stores call records, typically in the llm_calls table.
// RecordLLMCall stores an attempt's outcome: with r.ID set, it completes
// the record its StartLLMCall made.
type Recorder interface {
	RecordLLMCall(ctx context.Context, r CallRecord) error
}

// CallStarter is a Recorder that also records each attempt before it is
// sent (status "started"), so an attempt whose worker dies waiting for the
// reply is still counted. StartLLMCall returns the record's ID.
type CallStarter interface {
	StartLLMCall(ctx context.Context, r CallRecord) (int64, error)
}

// StatusStarted is the record status of an attempt sent and not yet
// completed.
const StatusStarted = "started"

// CallRecord describes one HTTP attempt, or one call refused before the
// network (budget exceeded, limiter wait cancelled).
type CallRecord struct {
	// ID is the record's ID when a CallStarter recorded the attempt before
	// it was sent; 0 otherwise.
	ID                              int64
	ReviewID, Stage, ItemKey, Model string
	// PromptHash is the hex SHA-256 of the canonical request: model,
	// messages, tools and response format. Equal prompts hash equally.
	PromptHash string
	// Status is "ok", "rate_limited", "http_<code>", "error",
	// "invalid_reply" or "budget_exceeded".
	Status string
	// Error is the error message when Status is not "ok".
	Error string
	// TokensIn and TokensOut are the usage the server reported, or
	// estimates when it reported none.
	TokensIn, TokensOut int
	Latency             time.Duration
	// Request is the request cut into the parts it is stored as, and
	// Response the reply's JSON body (empty when no reply was decoded);
	// both are empty when Config.OmitBodies is set.
	Request   *llmparts.Request
	Response  json.RawMessage
	StartedAt time.Time
	// Endpoint names the pool endpoint the attempt went to ("default"
	// without a pool; empty when refused before one was chosen).
	Endpoint string
}

// PromptHash returns the hex SHA-256 of req's canonical form: model,
// messages, tools, tool choice and response format (including the schema),
// with object keys sorted and insignificant whitespace removed, and the
// random id of every untrusted-text fence replaced by a fixed placeholder.
// The fence id is drawn afresh for each request, so without that the same
// prompt would never hash the same twice; a replayed review finds its
// recorded replies by this hash.
func PromptHash(req openai.ChatCompletionRequest) (string, error) {
	c, err := (*memory)(nil).cut(req)
	if err != nil {
		return "", err
	}
	return c.promptHash(), nil
}

// fenceID matches the tag of an untrusted-text fence (internal/untrusted):
// "UNTRUSTED-" and its 96-bit random id in hex.
var fenceID = regexp.MustCompile(`UNTRUSTED-[0-9a-f]{24}`)

// NormaliseFences replaces the random id of every fence tag in b with
// "UNTRUSTED-FENCE", so that two requests differing only in their fence
// ids compare equal.
func NormaliseFences(b []byte) []byte {
	return fenceID.ReplaceAll(b, []byte("UNTRUSTED-FENCE"))
}
