package llm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/httpwait"
	"github.com/reviewfleet/reviewfleet/internal/metrics"
)

// reserveScript reserves one request and cost tokens on two GCRA quotas in
// arrival order and says how long the caller must wait for its slot. It
// takes the time from Redis so every worker agrees on it.
//
// KEYS: request TAT, token TAT, penalty-until, cool-down, learned quota.
// ARGV: request emission interval, token emission interval (microseconds
// per unit, 0 = unlimited), burst tolerance (microseconds), token cost,
// and "1" when the intervals are the ones learned from the provider (the
// learned quota's req and tok fields; missing: unlimited).
//
// A reservation starts once the quota's theoretical arrival time (TAT)
// before it is within the tolerance of now, and pushes the TAT by its own
// cost: a large request goes first when it is its turn and the requests
// after it wait for the tokens it used, so none starves. Returns {wait_us,
// 0} or, during a cool-down, {-1, cool-down reason}.
var reserveScript = redis.NewScript(`
local cool = redis.call('GET', KEYS[4])
if cool then return {-1, cool} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tolerance = tonumber(ARGV[3])
local start = tonumber(redis.call('GET', KEYS[3]) or '0')
if start < now then start = now end
local function reserve(key, interval, cost)
  if interval <= 0 or cost <= 0 then return end
  local tat = tonumber(redis.call('GET', key) or '0')
  if tat < now then tat = now end
  if tat - tolerance > start then start = tat - tolerance end
  local newtat = tat + interval * cost
  redis.call('SET', key, string.format('%.0f', newtat), 'PX', math.ceil((newtat - now) / 1000) + 1)
end
local ri, ti = tonumber(ARGV[1]), tonumber(ARGV[2])
if ARGV[5] == '1' then
  local learned = redis.call('HMGET', KEYS[5], 'req', 'tok')
  ri, ti = tonumber(learned[1] or '0'), tonumber(learned[2] or '0')
end
reserve(KEYS[1], ri, 1)
reserve(KEYS[2], ti, tonumber(ARGV[4]))
return {math.ceil(start - now), ''}
`)

// syncScript moves a TAT so that no more than ARGV[1] calls (or tokens)
// can start at once: the provider said that much remains, whatever the
// limiter thought. KEYS: the TAT. ARGV: remaining, emission interval,
// burst tolerance (microseconds).
var syncScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local floor = now + tonumber(ARGV[3]) - (tonumber(ARGV[1]) - 1) * tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if floor > tat and floor > now then
  redis.call('SET', KEYS[1], string.format('%.0f', floor), 'PX', math.ceil((floor - now) / 1000) + 1)
  return 1
end
return 0
`)

// providerWaitScript extends a fleet-wide wait (KEYS[1]: ProviderWaitKey or
// QuotaBacklogKey) to ARGV[1] milliseconds from now, never shortening it.
var providerWaitScript = redis.NewScript(`
local left = redis.call('PTTL', KEYS[1])
if left < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 1
`)

// ProviderWaitKey is the Redis key whose time to live is how long the
// provider asked the fleet to wait: every limiter's penalty extends it,
// and submitters read it to say why a review is not moving.
const ProviderWaitKey = "reviewfleet:llm:provider-wait"

// ProviderWait returns how long the provider still asks the fleet to wait
// (0 when it does not, or Redis cannot say).
func ProviderWait(ctx context.Context, rdb redis.UniversalClient) time.Duration {
	d, err := rdb.PTTL(ctx, ProviderWaitKey).Result()
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// adjustScript moves the TATs by ARGV[1] requests and ARGV[2] tokens (may
// be negative: a refund) at the given intervals (ARGV[3], ARGV[4]). A
// refund never moves a TAT before now. KEYS: request TAT, token TAT.
var adjustScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
for i = 1, 2 do
  local interval = tonumber(ARGV[i + 2])
  local n = tonumber(ARGV[i])
  if interval > 0 and n ~= 0 then
    local tat = tonumber(redis.call('GET', KEYS[i]) or '0')
    if tat < now then tat = now end
    tat = tat + interval * n
    if tat > now then
      redis.call('SET', KEYS[i], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
    else
      redis.call('DEL', KEYS[i])
    end
  end
end
return 1
`)

// penalizeScript extends the shared penalty to now + ARGV[1] microseconds
// and moves both TATs to at least its end, so calls resume at the quota's
// rate rather than in a burst. KEYS as reserveScript.
var penalizeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local d = tonumber(ARGV[1])
local untilt = now + d
local cur = tonumber(redis.call('GET', KEYS[3]) or '0')
if untilt > cur then
  redis.call('SET', KEYS[3], string.format('%.0f', untilt), 'PX', math.ceil(d / 1000) + 1)
end
for i = 1, 2 do
  local tat = tonumber(redis.call('GET', KEYS[i]) or '0')
  if tat < untilt then
    redis.call('SET', KEYS[i], string.format('%.0f', untilt), 'PX', math.ceil(d / 1000) + 1)
  end
end
return 1
`)

// penaltyLeftScript returns the microseconds left of the shared penalty.
var penaltyLeftScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local blocked = tonumber(redis.call('GET', KEYS[1]) or '0')
if blocked > now then return math.ceil(blocked - now) end
return 0
`)

// QuotaBacklogKey is the Redis key whose time to live is how long calls
// now wait for the fleet's shared quota beyond QuotaBacklogThreshold: the
// quota, not the workers, bounds how fast the fleet reviews, and admission
// starts no batch review meanwhile (a review started now would only spend
// its deadline waiting for the quota).
const QuotaBacklogKey = "reviewfleet:llm:quota-backlog"

// QuotaBacklogThreshold is the wait for the shared quota that counts as a
// backlog: shorter waits are the pacing at work.
const QuotaBacklogThreshold = time.Second

// QuotaBacklog returns how long the longest recent wait for the fleet's
// shared quota still has to run (0 when no call waited beyond
// QuotaBacklogThreshold, or Redis cannot say).
func QuotaBacklog(ctx context.Context, rdb redis.UniversalClient) time.Duration {
	d, err := rdb.PTTL(ctx, QuotaBacklogKey).Result()
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// redisTimeout bounds the Redis round trips of Penalize, Correct and
// CoolDown, which have no context of their own.
const redisTimeout = 2 * time.Second

// DefaultFleetBurst is the fleet quota's default burst tolerance: a
// provider counting a sliding minute answers 429 to anything above its
// quota, so the fleet may run ahead of its steady rate by only this much.
const DefaultFleetBurst = time.Second

// NewRedisLimiter returns a fleet-wide limiter: every worker using the same
// Redis and key shares requestsPerMinute requests and tokensPerMinute tokens
// (0 = unlimited), paced at a steady rate with a burst tolerance of
// DefaultFleetBurst. See NewRedisLimiterBurst.
func NewRedisLimiter(rdb redis.UniversalClient, key string, requestsPerMinute, tokensPerMinute int) Limiter {
	return newRedisLimiter(rdb, key, requestsPerMinute, tokensPerMinute)
}

// NewRedisLimiterBurst is NewRedisLimiter with a burst tolerance: how far
// ahead of the steady rate the fleet may run (0 = DefaultFleetBurst).
// Calls are admitted in arrival order with reservations made in a Lua
// script (EVALSHA, falling back to EVAL when Redis lost it); a waiter sleeps
// until its slot without polling. A request of more tokens than the whole
// per-minute quota fails with ErrOverQuota. Penalize, Correct and CoolDown
// are best effort: a Redis error is ignored.
//
// endpoint names the endpoint and credentials the quota's calls go to
// (see EndpointID): a cool-down started by CoolDown holds only calls to
// the same endpoint with the same key, so a corrected key works at once.
//
// With neither quota given (0, 0) and an endpoint named, the limiter
// learns the quota from the provider's x-ratelimit-* headers (Learn): the
// quota is kept per endpoint and key in Redis, where every worker paces
// itself to LearnedShare of it.
func NewRedisLimiterBurst(rdb redis.UniversalClient, key, endpoint string, requestsPerMinute, tokensPerMinute int, burst time.Duration) Limiter {
	learn := requestsPerMinute <= 0 && tokensPerMinute <= 0 && endpoint != ""
	if learn {
		// The provider's quota is its key's: the keys are the endpoint's.
		key += ":" + endpoint
	}
	l := newRedisLimiter(rdb, key, requestsPerMinute, tokensPerMinute)
	l.learn = learn
	if burst > 0 {
		l.tolerance = burst
	}
	if !learn {
		l.keys[3] = "{" + key + "}:cooldown:" + endpoint
	}
	return l
}

// EndpointID is a short fingerprint of an endpoint and its API key, for
// keys and records that must not hold the key itself.
func EndpointID(baseURL, apiKey string) string {
	sum := sha256.Sum256([]byte(strings.TrimRight(baseURL, "/") + "\x00" + apiKey))
	return hex.EncodeToString(sum[:6])
}

func newRedisLimiter(rdb redis.UniversalClient, key string, rpm, tpm int) *redisLimiter {
	// One hash tag keeps the keys in one cluster slot.
	prefix := "{" + key + "}"
	return &redisLimiter{
		rdb:       rdb,
		key:       key,
		keys:      []string{prefix + ":req", prefix + ":tok", prefix + ":penalty", prefix + ":cooldown", prefix + ":learned"},
		rpm:       rpm,
		tpm:       tpm,
		tolerance: DefaultFleetBurst,
	}
}

type redisLimiter struct {
	rdb       redis.UniversalClient
	key       string
	keys      []string
	rpm, tpm  int
	tolerance time.Duration
	// learn: no quota was configured, the provider's is learned; learned
	// holds the rates this worker last learned or stored.
	learn   bool
	learned learnedRates
}

const minuteMicros = float64(time.Minute / time.Microsecond)

// interval is the GCRA emission interval in microseconds for perMinute.
func interval(perMinute int) string {
	if perMinute <= 0 {
		return "0"
	}
	return strconv.FormatFloat(minuteMicros/float64(perMinute), 'f', -1, 64)
}

// Wait reserves one request of tokens on the shared quota and sleeps until
// its slot. On cancellation the reservation is given back.
func (l *redisLimiter) Wait(ctx context.Context, tokens int) error {
	defer metrics.Since(metrics.LimiterWait.WithLabelValues("fleet"), time.Now())
	cost := max(tokens, 0)
	if l.tpm > 0 && cost > l.tpm {
		return fmt.Errorf("fleet rate limiter %q: request of about %d tokens, quota %d per minute (llm.fleet_tokens_per_minute): %w",
			l.key, cost, l.tpm, ErrOverQuota)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	wait, err := l.reserve(ctx, cost)
	if err != nil {
		return fmt.Errorf("fleet rate limiter %q: %w", l.key, err)
	}
	if wait > QuotaBacklogThreshold {
		// Best effort, as the provider wait: admission only reads it.
		_ = providerWaitScript.Run(ctx, l.rdb, []string{QuotaBacklogKey}, wait.Milliseconds()).Err()
	}
	for wait > 0 {
		if err := httpwait.Sleep(ctx, wait); err != nil {
			l.adjust(-1, -cost)
			return err
		}
		// A penalty that came while this call waited for its slot holds
		// it back too.
		if wait, err = l.penaltyLeft(ctx); err != nil {
			return fmt.Errorf("fleet rate limiter %q: %w", l.key, err)
		}
	}
	return nil
}

// reserve runs the reservation script and returns how long to wait.
func (l *redisLimiter) reserve(ctx context.Context, cost int) (time.Duration, error) {
	learn := "0"
	if l.learn {
		learn = "1"
	}
	res, err := reserveScript.Run(ctx, l.rdb, l.keys,
		interval(l.rpm), interval(l.tpm), l.tolerance.Microseconds(), cost, learn).Slice()
	if err != nil {
		return 0, fmt.Errorf("run GCRA script: %w", err)
	}
	if len(res) != 2 {
		return 0, fmt.Errorf("run GCRA script: unexpected reply %v", res)
	}
	wait, _ := res[0].(int64)
	if wait < 0 {
		reason, _ := res[1].(string)
		return 0, &CoolDownError{Reason: reason}
	}
	return time.Duration(wait) * time.Microsecond, nil
}

func (l *redisLimiter) penaltyLeft(ctx context.Context) (time.Duration, error) {
	us, err := penaltyLeftScript.Run(ctx, l.rdb, l.keys[2:3]).Int64()
	if err != nil {
		return 0, fmt.Errorf("read penalty: %w", err)
	}
	if us <= 0 {
		return 0, nil
	}
	// A little jitter keeps workers released together from colliding.
	d := time.Duration(us) * time.Microsecond
	return d + rand.N(d/10+time.Millisecond), nil
}

// adjust moves the quotas by requests and tokens (negative: a refund).
func (l *redisLimiter) adjust(requests, tokens int) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	rpm, tpm := l.rates()
	_ = adjustScript.Run(ctx, l.rdb, l.keys[:2], requests, tokens, interval(rpm), interval(tpm)).Err()
}

// rates are the requests and tokens per minute paced: the configured
// quota, or the one learned.
func (l *redisLimiter) rates() (rpm, tpm int) {
	if l.learn {
		return l.learned.get()
	}
	return l.rpm, l.tpm
}

// Correct charges the difference between a call's estimated and reported
// tokens to the shared quota.
func (l *redisLimiter) Correct(estimated, used int) {
	_, tpm := l.rates()
	if tpm <= 0 || used == estimated {
		return
	}
	l.adjust(0, min(used, tpm)-min(max(estimated, 0), tpm))
}

// Penalize pauses every worker sharing the key for d.
func (l *redisLimiter) Penalize(d time.Duration) {
	if d <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	_ = penalizeScript.Run(ctx, l.rdb, l.keys[:3], d.Microseconds()).Err()
	_ = providerWaitScript.Run(ctx, l.rdb, []string{ProviderWaitKey}, max(d.Milliseconds(), 1)).Err()
}

// CoolDown makes every worker sharing the key refuse calls for d with
// reason, without sending them.
func (l *redisLimiter) CoolDown(d time.Duration, reason string) {
	if d <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	_ = l.rdb.Set(ctx, l.keys[3], reason, d).Err()
}

// ErrOverQuota is wrapped when one request needs more tokens than a whole
// minute of the quota allows: it can never be admitted.
var ErrOverQuota = errors.New("request larger than the per-minute token quota")

// CoolDownError is returned by a limiter while its endpoint is cooling down
// after answering a permanent authentication or quota error: the call is
// not sent, and retrying before the cool-down ends cannot help.
type CoolDownError struct {
	Reason string // the provider's answer that started the cool-down
}

// Error says why calls are refused.
func (e *CoolDownError) Error() string {
	return "LLM endpoint cooling down after a permanent error: " + e.Reason
}
