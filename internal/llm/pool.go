package llm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Endpoint is one OpenAI-compatible endpoint of a pool (see
// WithEndpoints). Calls are spread over the pool's endpoints by weight; an
// endpoint that answers 401, 403 or insufficient_quota is left out for
// Config.CoolDown and its calls go to the others.
type Endpoint struct {
	// Name identifies the endpoint in llm_calls and logs.
	Name string
	// BaseURL and APIKey as in Config.
	BaseURL, APIKey string
	// Models maps a model name the stages ask for to this endpoint's name
	// for it (a missing model is sent unchanged).
	Models map[string]string
	// Weight is the endpoint's share of the calls (0 counts as 1).
	Weight int
	// Limiter is the endpoint's own quota (nil: none), waited on after the
	// client's limiter.
	Limiter Limiter
}

// WithEndpoints makes the client a pool of eps instead of the single
// endpoint of Config.BaseURL.
func WithEndpoints(eps ...Endpoint) Option {
	return func(o *options) { o.endpoints = append(o.endpoints, eps...) }
}

// endpoint is a pool member with its API client and local cool-down.
type endpoint struct {
	Endpoint
	api        *openai.Client
	coolUntil  atomic.Int64 // Unix nanoseconds; 0 when not cooling down
	coolReason atomic.Value // string: the answer that started the cool-down
}

func (e *endpoint) cooling(now time.Time) bool { return e.coolUntil.Load() > now.UnixNano() }

func (e *endpoint) coolDown(d time.Duration, reason string) {
	e.coolReason.Store(reason)
	e.coolUntil.Store(time.Now().Add(d).UnixNano())
}

// endpointFor picks an endpoint for one attempt and waits on its own
// limiter. An endpoint another worker put in cool-down is left out here
// too; when every endpoint is cooling down the attempt fails with a
// CoolDownError.
func (c *Client) endpointFor(ctx context.Context, est int) (*endpoint, error) {
	tried := map[*endpoint]bool{}
	for {
		ep := c.pick(tried)
		if ep == nil {
			return nil, c.coolingError()
		}
		if ep.Limiter == nil {
			return ep, nil
		}
		err := ep.Limiter.Wait(ctx, est)
		var cd *CoolDownError
		if errors.As(err, &cd) {
			ep.coolDown(c.cfg.CoolDown, cd.Reason)
			tried[ep] = true
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("wait for rate limiter of endpoint %s: %w", ep.Name, err)
		}
		return ep, nil
	}
}

// coolingError describes why no endpoint can take a call.
func (c *Client) coolingError() error {
	var reasons []string
	for _, e := range c.endpoints {
		r, _ := e.coolReason.Load().(string)
		if len(c.endpoints) > 1 {
			r = e.Name + ": " + r
		}
		reasons = append(reasons, r)
	}
	return &CoolDownError{Reason: strings.Join(reasons, "; ")}
}

// coolDownAfter takes ep out after a permanent auth or quota answer, in
// this worker and, through the limiters, in the fleet. It reports whether
// another endpoint can take the call instead.
func (c *Client) coolDownAfter(ep *endpoint, reason string) bool {
	ep.coolDown(c.cfg.CoolDown, reason)
	if cd, ok := ep.Limiter.(CoolDowner); ok {
		cd.CoolDown(c.cfg.CoolDown, reason)
	}
	if !c.pooled() {
		if cd, ok := c.limiter.(CoolDowner); ok {
			cd.CoolDown(c.cfg.CoolDown, reason)
		}
		return false
	}
	return c.pick(nil) != nil
}

// model is the name this endpoint knows model by.
func (e *endpoint) model(model string) string {
	if m, ok := e.Models[model]; ok && m != "" {
		return m
	}
	return model
}

func newEndpoint(ep Endpoint, hc *http.Client) (*endpoint, error) {
	u, err := url.Parse(ep.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("LLM endpoint %q: base URL %q: want an http(s) URL such as https://api.openai.com/v1", ep.Name, ep.BaseURL)
	}
	oc := openai.DefaultConfig(ep.APIKey)
	oc.BaseURL = strings.TrimRight(ep.BaseURL, "/")
	oc.HTTPClient = captureDoer{inner: hc}
	if ep.Weight <= 0 {
		ep.Weight = 1
	}
	return &endpoint{Endpoint: ep, api: openai.NewClientWithConfig(oc)}, nil
}

// pick chooses an endpoint not cooling down, by weight, skipping those in
// tried; nil when none is left.
func (c *Client) pick(tried map[*endpoint]bool) *endpoint {
	now := time.Now()
	total := 0
	for _, e := range c.endpoints {
		if !tried[e] && !e.cooling(now) {
			total += e.Weight
		}
	}
	if total == 0 {
		return nil
	}
	n := rand.N(total)
	for _, e := range c.endpoints {
		if tried[e] || e.cooling(now) {
			continue
		}
		if n < e.Weight {
			return e
		}
		n -= e.Weight
	}
	return nil
}

// pooled reports whether the client has several endpoints.
func (c *Client) pooled() bool { return len(c.endpoints) > 1 }
