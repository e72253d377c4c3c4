package testenv

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/localenv"
)

// Leasing of Redis databases among concurrent tests and test processes.
const (
	leaseKeyPrefix = "reviewfleet:testlease:" // + DB number, in DB 0
	leaseTTL       = 15 * time.Minute         // longer than go test's default 10m timeout
	leaseWait      = 60 * time.Second         // how long a test waits for a free DB
	leasePoll      = 100 * time.Millisecond
	firstLeaseDB   = 1
	lastLeaseDB    = 15
)

// releaseScript deletes a lease only if it still holds our token.
var releaseScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

var (
	redisOnce sync.Once
	redisBase *redis.Options // nil: no server of ours, use miniredis
	redisOwn  *RedisServer   // the redis-server this process started, if any
	redisErr  error
)

// RedisAddr returns a Redis server address and a database number that this
// test alone uses until it ends; the database starts empty and is flushed
// again at the end. Each call leases another database. Use RedisURL when the
// server needs a password.
//
// The server is only ever one the user named or one the tests started:
// TEST_REDIS_URL if set (the test fails if it does not answer), else a
// redis-server started once per test process on a free port (stopped by
// Shutdown) when the binary is installed, else an in-process miniredis per
// test (database 0). Whatever answers at the default address is never
// touched: it may hold someone's data. On a server, a database 1..15 is
// leased with a key in database 0, so tests in other processes sharing it
// never get the same one; when all are taken the test waits up to a minute.
func RedisAddr(t testing.TB) (addr string, db int) {
	t.Helper()
	opts := leaseRedis(t)
	return opts.Addr, opts.DB
}

// RedisURL is RedisAddr as a redis:// URL (credentials and TLS scheme of
// TEST_REDIS_URL kept), for configuration that takes REDIS_URL.
func RedisURL(t testing.TB) string {
	t.Helper()
	opts := leaseRedis(t)
	scheme := "redis"
	if opts.TLSConfig != nil {
		scheme = "rediss"
	}
	u := url.URL{Scheme: scheme, Host: opts.Addr, Path: "/" + strconv.Itoa(opts.DB)}
	if opts.Username != "" || opts.Password != "" {
		u.User = url.UserPassword(opts.Username, opts.Password)
	}
	return u.String()
}

// leaseRedis returns connection options for a database leased to t.
func leaseRedis(t testing.TB) *redis.Options {
	t.Helper()
	redisOnce.Do(func() {
		redisBase, redisOwn, redisErr = resolveRedis(context.Background(), os.Getenv("TEST_REDIS_URL"), RedisServerBinary())
	})
	if redisErr != nil {
		t.Fatalf("testenv: %v", redisErr)
	}
	if redisBase == nil {
		addr, stop, err := localenv.StartRedis()
		if err != nil {
			t.Fatalf("testenv: %v", err)
		}
		t.Cleanup(stop)
		return &redis.Options{Addr: addr}
	}

	ctx, cancel := context.WithTimeout(context.Background(), leaseWait+10*time.Second)
	defer cancel()
	admin := redis.NewClient(withDB(redisBase, 0))
	l, err := acquireLease(ctx, admin, dbRange(), leaseWait)
	if err != nil {
		_ = admin.Close()
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := l.release(ctx); err != nil {
			t.Errorf("testenv: %v", err)
		}
	})
	return withDB(redisBase, l.db)
}

// resolveRedis picks the tests' server: explicit (which must answer),
// else a redis-server started from bin, else none (nil options: miniredis).
func resolveRedis(ctx context.Context, explicit, bin string) (*redis.Options, *RedisServer, error) {
	if explicit == "" {
		if bin == "" {
			return nil, nil, nil
		}
		srv, err := startRedisServer(bin)
		if err != nil {
			return nil, nil, err
		}
		return &redis.Options{Addr: srv.Addr}, srv, nil
	}
	opts, err := redis.ParseURL(explicit)
	if err != nil {
		return nil, nil, fmt.Errorf("parse TEST_REDIS_URL %s: %w", redactDSN(explicit), err)
	}
	probe := *opts
	probe.MaxRetries = -1
	probe.DialTimeout = 2 * time.Second
	c := redis.NewClient(&probe)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		return nil, nil, fmt.Errorf("TEST_REDIS_URL is set but its server does not answer: %w", err)
	}
	return opts, nil, nil
}

// stopOwnRedis stops the redis-server this process started (Shutdown).
func stopOwnRedis() {
	if redisOwn != nil {
		redisOwn.Stop()
	}
}

func withDB(base *redis.Options, db int) *redis.Options {
	o := *base
	o.DB = db
	return &o
}

func dbRange() []int {
	dbs := make([]int, 0, lastLeaseDB-firstLeaseDB+1)
	for n := firstLeaseDB; n <= lastLeaseDB; n++ {
		dbs = append(dbs, n)
	}
	return dbs
}

// lease is one database leased in admin's database 0.
type lease struct {
	admin *redis.Client
	db    int
	token string
}

// acquireLease leases one of dbs, polling until wait passes when all are
// taken, and flushes the leased database. Databases the server does not
// have are skipped.
func acquireLease(ctx context.Context, admin *redis.Client, dbs []int, wait time.Duration) (*lease, error) {
	token := strconv.FormatUint(rand.Uint64(), 36) + "-" + strconv.Itoa(os.Getpid())
	deadline := time.Now().Add(wait)
	unusable := map[int]bool{}
	for {
		// Start at a random position so concurrent tests spread out.
		start := rand.IntN(len(dbs))
		for i := range dbs {
			db := dbs[(start+i)%len(dbs)]
			if unusable[db] {
				continue
			}
			ok, err := admin.SetNX(ctx, leaseKeyPrefix+strconv.Itoa(db), token, leaseTTL).Result()
			if err != nil {
				return nil, fmt.Errorf("lease a redis database: %w", err)
			}
			if !ok {
				continue
			}
			l := &lease{admin: admin, db: db, token: token}
			if err := l.flush(ctx); err != nil {
				_ = l.release(ctx)
				if isOutOfRange(err) {
					unusable[db] = true
					continue
				}
				return nil, fmt.Errorf("lease redis database %d: %w", db, err)
			}
			return l, nil
		}
		if len(unusable) == len(dbs) {
			return nil, fmt.Errorf("lease a redis database: the server has none of databases %d..%d", dbs[0], dbs[len(dbs)-1])
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lease a redis database: all of %v stayed leased for %s (stale leases expire after %s; keys %s*)", dbs, wait, leaseTTL, leaseKeyPrefix)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lease a redis database: %w", ctx.Err())
		case <-time.After(leasePoll):
		}
	}
}

// flush empties the leased database.
func (l *lease) flush(ctx context.Context) error {
	c := redis.NewClient(withDB(l.admin.Options(), l.db))
	defer c.Close()
	return c.FlushDB(ctx).Err()
}

// release flushes the database and gives the lease back if it is still ours.
func (l *lease) release(ctx context.Context) error {
	var errs []error
	if err := l.flush(ctx); err != nil && !isOutOfRange(err) {
		errs = append(errs, fmt.Errorf("flush redis database %d: %w", l.db, err))
	}
	if err := releaseScript.Run(ctx, l.admin, []string{leaseKeyPrefix + strconv.Itoa(l.db)}, l.token).Err(); err != nil {
		errs = append(errs, fmt.Errorf("release redis database %d: %w", l.db, err))
	}
	return errors.Join(errs...)
}

func isOutOfRange(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "out of range")
}
