package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// attemptResult is the outcome of one HTTP attempt.
type attemptResult struct {
	resp                openai.ChatCompletionResponse
	err                 error
	sent                bool // the request reached the HTTP client
	status              int  // HTTP status of an error reply, or 0
	retryable           bool
	switched            bool // a permanent answer of one pool endpoint: retried on another
	retryAfter          time.Duration
	hasRetryAfter       bool
	tokensIn, tokensOut int
	latency             time.Duration
}

// attempt makes one HTTP attempt and records it.
func (c *Client) attempt(ctx context.Context, r *request) attemptResult {
	rec := CallRecord{
		ReviewID: r.meta.ReviewID, Stage: r.meta.Stage, ItemKey: r.meta.ItemKey, Model: r.meta.Model,
		PromptHash: r.hash, Request: r.parts, StartedAt: time.Now().UTC(),
	}
	if c.limiter != nil {
		if err := c.limiter.Wait(ctx, r.est); err != nil {
			err = fmt.Errorf("wait for rate limiter: %w", err)
			c.record(ctx, rec, StatusError, err)
			return attemptResult{err: err}
		}
	}
	ep, err := c.endpointFor(ctx, r.est)
	if err != nil {
		c.record(ctx, rec, StatusError, err)
		return attemptResult{err: err}
	}
	rec.Endpoint = ep.Name
	if c.budget != nil {
		if err := c.budget.Reserve(ctx, r.meta.ReviewID, r.est); err != nil {
			status := StatusError
			if errors.Is(err, ErrBudgetExceeded) {
				status = StatusBudgetExceeded
			}
			err = fmt.Errorf("reserve budget for review %q: %w", r.meta.ReviewID, err)
			c.record(ctx, rec, status, err)
			return attemptResult{err: err}
		}
	}

	c.start(ctx, &rec)
	ex := &exchange{stage: r.meta.Stage, item: r.meta.ItemKey}
	actx, cancel := context.WithTimeout(context.WithValue(ctx, exchangeKey{}, ex), c.cfg.Timeout)
	start := time.Now()
	req := r.req
	req.Model = ep.model(req.Model)
	resp, err := ep.api.CreateChatCompletion(actx, req)
	cancel()
	res := attemptResult{resp: resp, sent: ex.sent, latency: time.Since(start)}
	rec.Latency = res.latency

	if err == nil {
		res.tokensIn, res.tokensOut = usageOf(resp, r)
	}
	if c.budget != nil {
		if cerr := c.budget.Commit(context.WithoutCancel(ctx), r.meta.ReviewID, res.tokensIn+res.tokensOut); cerr != nil {
			c.logger.Warn("commit LLM budget", "review_id", r.meta.ReviewID, "stage", r.meta.Stage, "error", cerr)
		}
	}
	rec.TokensIn, rec.TokensOut = res.tokensIn, res.tokensOut

	if err == nil {
		if !c.cfg.OmitBodies {
			rec.Response, _ = json.Marshal(redactResponse(resp))
		}
		for _, l := range []Limiter{c.limiter, ep.Limiter} {
			if cr, ok := l.(Corrector); ok {
				cr.Correct(r.est, res.tokensIn+res.tokensOut)
			}
		}
		c.learn(ep, ex.header)
		if l := c.penaltyTarget(ep); l != nil {
			if d := exhaustedFor(ex.header); d > 0 {
				l.Penalize(d)
			}
		}
		res.err = c.checkReply(resp, r.check)
		status := StatusOK
		if res.err != nil {
			status = StatusInvalidReply
		}
		c.record(ctx, rec, status, res.err)
		return res
	}

	status := StatusError
	switch {
	case ctx.Err() != nil:
		res.err = err
	case !ex.sent:
		// go-openai refused the request before sending it.
		res.err = fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	case ex.status >= 400:
		c.learn(ep, ex.header)
		res.status = ex.status
		res.err = err
		res.retryable = retryableStatus(ex.status) && !QuotaExhausted(err)
		res.retryAfter, res.hasRetryAfter = retryAfter(ex.header, time.Now())
		status = HTTPStatus(ex.status)
		if ex.status == http.StatusTooManyRequests && res.retryable {
			status = StatusRateLimited
			if l := c.penaltyTarget(ep); l != nil {
				pause := res.retryAfter
				if !res.hasRetryAfter {
					pause = time.Second
				}
				l.Penalize(pause)
			}
		}
		if coolsDown(ex.status, err) && c.coolDownAfter(ep, fmt.Sprintf("HTTP %d: %v", ex.status, err)) {
			// Another endpoint of the pool takes the call, without the
			// refusing endpoint's wait.
			res.retryable, res.switched, res.hasRetryAfter = true, true, false
		}
	case errors.Is(err, context.DeadlineExceeded):
		res.err = fmt.Errorf("request timed out after %s: %w", c.cfg.Timeout, err)
		res.retryable = true
	default:
		// Network failure or an undecodable reply body.
		res.err = err
		res.retryable = true
	}
	c.record(ctx, rec, status, res.err)
	return res
}

// coolsDown reports a provider answer that will not change for any call
// until someone fixes the account: a refused key or an exhausted quota.
func coolsDown(status int, err error) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden || QuotaExhausted(err)
}

// checkReply rejects replies without choices, then applies check.
func (c *Client) checkReply(resp openai.ChatCompletionResponse, check replyCheck) error {
	if len(resp.Choices) == 0 {
		return &InvalidReplyError{Reason: "reply has no choices"}
	}
	if check == nil {
		return nil
	}
	return check(resp)
}

// start records the attempt as started before it is sent, when the
// recorder can. Like record, it never fails the call.
func (c *Client) start(ctx context.Context, rec *CallRecord) {
	st, ok := c.recorder.(CallStarter)
	if !ok {
		return
	}
	start := *rec
	start.Status = StatusStarted
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultRecordTimeout)
	defer cancel()
	id, err := st.StartLLMCall(rctx, start)
	if err != nil {
		c.logger.Warn("record started LLM call", "review_id", rec.ReviewID, "stage", rec.Stage,
			"item", rec.ItemKey, "error", err)
		return
	}
	rec.ID = id
}

// record stores rec with its outcome. Recording never fails the call: a
// recorder error is logged.
func (c *Client) record(ctx context.Context, rec CallRecord, status string, err error) {
	observe(rec, status)
	if c.recorder == nil {
		return
	}
	rec.Status = status
	if err != nil {
		rec.Error = err.Error()
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultRecordTimeout)
	defer cancel()
	if rerr := c.recorder.RecordLLMCall(rctx, rec); rerr != nil {
		c.logger.Warn("record LLM call", "review_id", rec.ReviewID, "stage", rec.Stage,
			"item", rec.ItemKey, "status", rec.Status, "error", rerr)
	}
}

// usageOf returns the reply's token usage, estimating what the server did
// not report.
func usageOf(resp openai.ChatCompletionResponse, r *request) (in, out int) {
	in, out = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
	if in == 0 {
		in = r.est - maxTokens(r.req)
	}
	if out == 0 {
		n := 0
		for _, ch := range resp.Choices {
			n += len(ch.Message.Content)
			for _, tc := range ch.Message.ToolCalls {
				n += len(tc.Function.Name) + len(tc.Function.Arguments)
			}
		}
		out = (n + 3) / 4
	}
	return in, out
}

// estimateTokens guesses a request's cost before sending it: a quarter of
// the prompt's characters plus the completion limit.
func estimateTokens(req openai.ChatCompletionRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Role) + len(m.Content) + len(m.Name)
		for _, p := range m.MultiContent {
			n += len(p.Text)
		}
		for _, tc := range m.ToolCalls {
			n += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
	}
	if len(req.Tools) > 0 {
		if b, err := json.Marshal(req.Tools); err == nil {
			n += len(b)
		}
	}
	if rf := req.ResponseFormat; rf != nil && rf.JSONSchema != nil && rf.JSONSchema.Schema != nil {
		if b, err := rf.JSONSchema.Schema.MarshalJSON(); err == nil {
			n += len(b)
		}
	}
	return (n+3)/4 + maxTokens(req)
}

// maxTokens is the request's completion limit, or a default guess.
func maxTokens(req openai.ChatCompletionRequest) int {
	//lint:ignore SA1019 max_tokens is what most OpenAI-compatible servers accept; reasoning models get max_completion_tokens
	legacy := req.MaxTokens
	switch {
	case req.MaxCompletionTokens > 0:
		return req.MaxCompletionTokens
	case legacy > 0:
		return legacy
	}
	return defaultEstimateOutput
}

// penaltyTarget is the limiter a rate limit of ep's provider pauses: the
// endpoint's own in a pool, else the client's.
func (c *Client) penaltyTarget(ep *endpoint) Limiter {
	if c.pooled() && ep.Limiter != nil {
		return ep.Limiter
	}
	return c.limiter
}

// learn passes the rate limits a reply of ep stated to the limiter its
// provider's limits apply to.
func (c *Client) learn(ep *endpoint, h http.Header) {
	l, ok := c.penaltyTarget(ep).(Learner)
	if !ok {
		return
	}
	if p := parseProviderLimits(h); p.Known() {
		l.Learn(p)
	}
}
