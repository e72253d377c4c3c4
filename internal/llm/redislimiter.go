package llm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// waitScript is a GCRA check over a request quota and a token quota plus a
// shared penalty. It takes the time from Redis so every worker agrees on it.
// KEYS: request TAT, token TAT, penalty-until. ARGV: request emission
// interval, token emission interval (microseconds per unit, 0 = unlimited),
// burst tolerance (microseconds), token cost. Returns {1, 0} when the call
// may start (and records it) or {0, wait_us}.
var waitScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tolerance = tonumber(ARGV[3])
local wait = 0
local blocked = tonumber(redis.call('GET', KEYS[3]) or '0')
if blocked > now then wait = blocked - now end
local function check(key, interval, cost)
  if interval <= 0 or cost <= 0 then return nil end
  local tat = tonumber(redis.call('GET', key) or '0')
  if tat < now then tat = now end
  local newtat = tat + interval * cost
  local allow_at = newtat - tolerance
  if allow_at > now and allow_at - now > wait then wait = allow_at - now end
  return newtat
end
local rtat = check(KEYS[1], tonumber(ARGV[1]), 1)
local ttat = check(KEYS[2], tonumber(ARGV[2]), tonumber(ARGV[4]))
if wait > 0 then return {0, math.ceil(wait)} end
if rtat then redis.call('SET', KEYS[1], string.format('%.0f', rtat), 'PX', math.ceil((rtat - now) / 1000) + 1) end
if ttat then redis.call('SET', KEYS[2], string.format('%.0f', ttat), 'PX', math.ceil((ttat - now) / 1000) + 1) end
return {1, 0}
`)

// penalizeScript extends the shared penalty to now + ARGV[1] microseconds
// and empties both quotas. KEYS as waitScript; ARGV[2] is the tolerance.
var penalizeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local d = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local untilt = now + d
local cur = tonumber(redis.call('GET', KEYS[3]) or '0')
if untilt > cur then
  redis.call('SET', KEYS[3], string.format('%.0f', untilt), 'PX', math.ceil(d / 1000) + 1)
end
for i = 1, 2 do
  local tat = tonumber(redis.call('GET', KEYS[i]) or '0')
  if tat < now + tolerance then
    redis.call('SET', KEYS[i], string.format('%.0f', now + tolerance), 'PX', math.ceil(tolerance / 1000) + 1)
  end
end
return 1
`)

// penalizeTimeout bounds the Redis round trip of Penalize, which has no
// context of its own.
const penalizeTimeout = 2 * time.Second

// NewRedisLimiter returns a fleet-wide limiter: every worker using the same
// Redis and key shares requestsPerMinute requests and tokensPerMinute tokens
// (0 = unlimited), each with a burst of one minute's worth. The quota is
// enforced with GCRA in a Lua script (run with EVALSHA, falling back to EVAL
// when Redis lost the script). Wait polls only as often as the script says
// the next slot opens. Penalize is best effort: a Redis error is ignored.
func NewRedisLimiter(rdb redis.UniversalClient, key string, requestsPerMinute, tokensPerMinute int) Limiter {
	return newRedisLimiter(rdb, key, requestsPerMinute, tokensPerMinute)
}

func newRedisLimiter(rdb redis.UniversalClient, key string, rpm, tpm int) *redisLimiter {
	// One hash tag keeps the keys in one cluster slot.
	prefix := "{" + key + "}"
	return &redisLimiter{
		rdb:  rdb,
		key:  key,
		keys: []string{prefix + ":req", prefix + ":tok", prefix + ":penalty"},
		rpm:  rpm,
		tpm:  tpm,
	}
}

type redisLimiter struct {
	rdb      redis.UniversalClient
	key      string
	keys     []string
	rpm, tpm int
}

const minuteMicros = float64(time.Minute / time.Microsecond)

// interval is the GCRA emission interval in microseconds for perMinute.
func interval(perMinute int) string {
	if perMinute <= 0 {
		return "0"
	}
	return strconv.FormatFloat(minuteMicros/float64(perMinute), 'f', -1, 64)
}

// Wait blocks until the shared quota admits one request of tokens.
func (l *redisLimiter) Wait(ctx context.Context, tokens int) error {
	cost := max(tokens, 0)
	if l.tpm > 0 {
		cost = min(cost, l.tpm)
	}
	for {
		ok, wait, err := l.try(ctx, cost)
		if err != nil {
			return fmt.Errorf("fleet rate limiter %q: %w", l.key, err)
		}
		if ok {
			return nil
		}
		// A little jitter keeps workers woken together from colliding.
		wait += time.Millisecond + rand.N(wait/10+time.Millisecond)
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
	}
}

// try runs one GCRA check; when it fails, wait says how long until it
// could pass.
func (l *redisLimiter) try(ctx context.Context, cost int) (bool, time.Duration, error) {
	res, err := waitScript.Run(ctx, l.rdb, l.keys,
		interval(l.rpm), interval(l.tpm), strconv.FormatFloat(minuteMicros, 'f', -1, 64), cost).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("run GCRA script: %w", err)
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("run GCRA script: unexpected reply %v", res)
	}
	return res[0] == 1, time.Duration(res[1]) * time.Microsecond, nil
}

// Penalize pauses every worker sharing the key for d.
func (l *redisLimiter) Penalize(d time.Duration) {
	if d <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), penalizeTimeout)
	defer cancel()
	_ = penalizeScript.Run(ctx, l.rdb, l.keys, d.Microseconds(), strconv.FormatFloat(minuteMicros, 'f', -1, 64)).Err()
}
