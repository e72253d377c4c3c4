package llm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmparts"
)

// Chat sends one chat completion request on behalf of meta. It sets
// req.Model to meta.Model when empty, and for every HTTP attempt waits on the
// limiter, reserves budget, calls the endpoint and records the attempt.
// 5xx, 408, 409, 429 and network errors are retried up to Config.MaxAttempts
// times, honouring Retry-After. A call that stays rate limited returns a
// *RateLimitError; rate-limit headers also pause the limiter.
func (c *Client) Chat(ctx context.Context, meta Meta, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	resp, _, err := c.call(ctx, meta, req, nil)
	return resp, err
}

// replyCheck inspects a successful reply; an error marks the attempt's
// record "invalid_reply" and is returned from call unchanged.
type replyCheck func(openai.ChatCompletionResponse) error

// callStats sums what the attempts of one call used.
type callStats struct {
	attempts            int
	tokensIn, tokensOut int
	latency             time.Duration
	status              int // HTTP status of the last attempt's error answer, or 0
}

// request is one prepared call: the request and what every attempt shares.
type request struct {
	meta  Meta
	req   openai.ChatCompletionRequest
	hash  string
	parts *llmparts.Request // nil when bodies are not recorded
	est   int
	check replyCheck
}

func (c *Client) call(ctx context.Context, meta Meta, req openai.ChatCompletionRequest, check replyCheck) (openai.ChatCompletionResponse, callStats, error) {
	var stats callStats
	r, err := c.prepare(meta, req, check)
	if err != nil {
		return openai.ChatCompletionResponse{}, stats, err
	}
	ctx, span := c.startSpan(ctx, r)
	resp, err := c.attempts(ctx, r, &stats)
	c.endSpan(span, resp, stats, err)
	return resp, stats, err
}

// prepare validates and completes req and computes what attempts share.
func (c *Client) prepare(meta Meta, req openai.ChatCompletionRequest, check replyCheck) (*request, error) {
	if meta.Model == "" {
		meta.Model = req.Model
	}
	if meta.Model == "" {
		return nil, fmt.Errorf("chat completion for stage %q: Meta.Model is required: %w", meta.Stage, ErrInvalidRequest)
	}
	if req.Model == "" {
		req.Model = meta.Model
	}
	if req.Stream {
		return nil, fmt.Errorf("chat completion for stage %q: streaming is not supported: %w", meta.Stage, ErrInvalidRequest)
	}
	req = redactRequest(req, c.memory.clean)
	cut, err := c.memory.cut(req)
	if err != nil {
		return nil, fmt.Errorf("chat completion for stage %q: %w: %w", meta.Stage, ErrInvalidRequest, err)
	}
	r := &request{meta: meta, req: req, hash: cut.promptHash(), est: estimateTokens(req), check: check}
	if !c.cfg.OmitBodies {
		r.parts = cut.parts()
	}
	return r, nil
}

// attempts runs HTTP attempts until one succeeds, a permanent error occurs
// or the attempts are exhausted.
func (c *Client) attempts(ctx context.Context, r *request, stats *callStats) (openai.ChatCompletionResponse, error) {
	for n := 1; ; n++ {
		res := c.attempt(ctx, r)
		if res.sent {
			stats.attempts++
		}
		stats.tokensIn += res.tokensIn
		stats.tokensOut += res.tokensOut
		stats.latency += res.latency
		stats.status = res.status
		if res.err == nil {
			return res.resp, nil
		}
		fail := func() error {
			err := fmt.Errorf("chat completion for stage %q (model %s, attempt %d of %d): %w",
				r.meta.Stage, r.meta.Model, n, c.cfg.MaxAttempts, res.err)
			if res.status == http.StatusTooManyRequests && res.retryable && !res.switched {
				ra := res.retryAfter
				if !res.hasRetryAfter {
					ra = DefaultRateLimitDelay
				}
				// Jitter keeps the workers one 429 hit from coming back
				// in lock-step.
				err = &RateLimitError{RetryAfter: ra + rateJitter(ra), Err: err}
			}
			if res.sent {
				err = &EndpointError{Err: err}
			}
			return err
		}
		if !res.retryable || n >= c.cfg.MaxAttempts {
			return openai.ChatCompletionResponse{}, fail()
		}
		wait := c.backoff(n)
		if res.hasRetryAfter {
			if res.retryAfter > c.cfg.MaxRetryWait {
				return openai.ChatCompletionResponse{}, fail()
			}
			wait = res.retryAfter + rateJitter(res.retryAfter)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return openai.ChatCompletionResponse{}, fmt.Errorf("chat completion for stage %q: wait before attempt %d: %w", r.meta.Stage, n+1, err)
		}
	}
}

// backoff is the pause after failed attempt n (1-based): exponential with
// full jitter, uniform in [0, RetryBackoff * 2^(n-1)] capped at
// MaxRetryWait, so workers failing together spread their retries.
func (c *Client) backoff(n int) time.Duration {
	d := c.cfg.RetryBackoff << min(n-1, 20)
	if d <= 0 || d > c.cfg.MaxRetryWait {
		d = c.cfg.MaxRetryWait
	}
	return rand.N(d + 1)
}

// rateJitter is the small random delay added to a wait the provider asked
// for: up to a tenth of it plus 100ms.
func rateJitter(d time.Duration) time.Duration {
	return rand.N(max(d, 0)/10 + 100*time.Millisecond)
}
