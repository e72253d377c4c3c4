package llmfake

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Misbehaviours a provider shows, by the name drills use for them.
const (
	Misbehave429       = "429"       // rate limited, with Retry-After
	MisbehaveQuota     = "quota"     // 429 insufficient_quota: the account is out of credit
	Misbehave401       = "401"       // the key is wrong
	Misbehave403       = "403"       // the key may not use the model
	Misbehave500       = "500"       // the server failed
	MisbehaveGarbage   = "garbage"   // 200 with a body that is not JSON
	MisbehaveTruncated = "truncated" // 200 whose content is cut mid-JSON (finish_reason length)
	MisbehaveContext   = "context"   // 400 context_length_exceeded
	MisbehaveSlow      = "slow"      // the normal reply, after a long delay
)

// Misbehaviours lists every misbehaviour, in a stable order.
var Misbehaviours = []string{
	Misbehave429, MisbehaveQuota, Misbehave401, Misbehave403, Misbehave500,
	MisbehaveGarbage, MisbehaveTruncated, MisbehaveContext, MisbehaveSlow,
}

// isMisbehaviour reports whether kind is one of Misbehaviours.
func isMisbehaviour(kind string) bool {
	for _, k := range Misbehaviours {
		if k == kind {
			return true
		}
	}
	return false
}

// ParseShares reads "KIND=SHARE,…" (such as "429=0.1,500=0.05"): the share
// of requests that get each misbehaviour. Shares are in [0, 1] and add up to
// at most 1; an empty string gives no shares.
func ParseShares(s string) (map[string]float64, error) {
	out := map[string]float64{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	total := 0.0
	for _, part := range strings.Split(s, ",") {
		kind, share, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("misbehaviour %q: want KIND=SHARE", part)
		}
		if !isMisbehaviour(kind) {
			return nil, fmt.Errorf("misbehaviour %q: unknown kind (one of %s)", kind, strings.Join(Misbehaviours, ", "))
		}
		v, err := strconv.ParseFloat(share, 64)
		if err != nil || v < 0 || v > 1 {
			return nil, fmt.Errorf("misbehaviour %s: share %q is not a number from 0 to 1", kind, share)
		}
		if _, dup := out[kind]; dup {
			return nil, fmt.Errorf("misbehaviour %s given twice", kind)
		}
		out[kind] = v
		total += v
	}
	if total > 1+1e-9 {
		return nil, fmt.Errorf("misbehaviour shares add up to %.3g, more than 1", total)
	}
	return out, nil
}

// MisbehaveOptions tunes Misbehave.
type MisbehaveOptions struct {
	// Shares is the share of requests per misbehaviour (see ParseShares).
	Shares map[string]float64
	// Always, when set, gives every request this misbehaviour.
	Always string
	// Seed seeds the random choice, so that a drill can be repeated.
	Seed uint64
	// Slow is the delay of MisbehaveSlow (default 30s); RetryAfter the
	// Retry-After of Misbehave429 (default 1s).
	Slow, RetryAfter time.Duration
	// Chosen, when set, is told which misbehaviour each request got ("" for
	// none), for example to record it.
	Chosen func(req openai.ChatCompletionRequest, kind string)
}

// Misbehave wraps next so that a share of requests (or all of them, with
// Always) get a provider's misbehaviour instead of next's reply.
func Misbehave(next Handler, o MisbehaveOptions) Handler {
	if o.Slow <= 0 {
		o.Slow = 30 * time.Second
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = time.Second
	}
	kinds := make([]string, 0, len(o.Shares))
	for k := range o.Shares {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	pick := func() string {
		if o.Always != "" {
			return o.Always
		}
		mu.Lock()
		x := rng.Float64()
		mu.Unlock()
		for _, k := range kinds {
			if x < o.Shares[k] {
				return k
			}
			x -= o.Shares[k]
		}
		return ""
	}
	return func(ctx context.Context, req openai.ChatCompletionRequest) Reply {
		kind := pick()
		if o.Chosen != nil {
			o.Chosen(req, kind)
		}
		if kind == "" {
			return next(ctx, req)
		}
		return MisbehaviourReply(kind, func() Reply { return next(ctx, req) }, o)
	}
}

// MisbehaviourReply returns the reply of misbehaviour kind; normal gives the
// reply the request would have had (for truncated and slow).
func MisbehaviourReply(kind string, normal func() Reply, o MisbehaveOptions) Reply {
	switch kind {
	case Misbehave429:
		return RateLimited(o.RetryAfter)
	case MisbehaveQuota:
		return rawError(http.StatusTooManyRequests, "insufficient_quota", "insufficient_quota",
			"You exceeded your current quota, please check your plan and billing details.")
	case Misbehave401:
		return rawError(http.StatusUnauthorized, "invalid_request_error", "invalid_api_key",
			"Incorrect API key provided.")
	case Misbehave403:
		return rawError(http.StatusForbidden, "invalid_request_error", "model_not_allowed",
			"You are not allowed to use this model.")
	case Misbehave500:
		return Fail(http.StatusInternalServerError, "The server had an error while processing your request.")
	case MisbehaveGarbage:
		return Reply{Raw: "<html><body><h1>502 Bad Gateway</h1></body></html>\n",
			Headers: map[string]string{"Content-Type": "text/html"}}
	case MisbehaveTruncated:
		r := normal()
		if r.Status != 0 && r.Status != http.StatusOK || r.Raw != "" {
			return r
		}
		text := r.Content
		if len(r.ToolCalls) > 0 {
			text = r.ToolCalls[0].Function.Arguments
		}
		if text == "" {
			text = `{"findings": [{"risk_type": "robustness"}]}`
		}
		return Reply{Content: text[:len(text)/2], FinishReason: openai.FinishReasonLength}
	case MisbehaveContext:
		return rawError(http.StatusBadRequest, "invalid_request_error", "context_length_exceeded",
			"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.")
	case MisbehaveSlow:
		r := normal()
		r.Delay += o.Slow
		return r
	}
	return Fail(http.StatusInternalServerError, "llmfake: unknown misbehaviour "+kind)
}

// rawError is an OpenAI-style error body with a type and code.
func rawError(status int, typ, code, msg string) Reply {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": code,
	}})
	return Reply{Status: status, Raw: string(body) + "\n"}
}
