package testenv

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reviewfleet/reviewfleet/internal/localenv"
)

func TestRedisLeasesAreDistinct(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type target struct {
		addr string
		db   int
	}
	var first target
	t.Run("two leases", func(t *testing.T) {
		var wg sync.WaitGroup
		got := make([]target, 2)
		for i := range got {
			wg.Go(func() {
				addr, db := RedisAddr(t)
				got[i] = target{addr, db}
			})
		}
		wg.Wait()
		if got[0] == got[1] {
			t.Fatalf("both leases got %+v", got[0])
		}
		first = got[0]
		a := redis.NewClient(&redis.Options{Addr: got[0].addr, DB: got[0].db})
		b := redis.NewClient(&redis.Options{Addr: got[1].addr, DB: got[1].db})
		defer a.Close()
		defer b.Close()
		for _, c := range []*redis.Client{a, b} {
			if n, err := c.DBSize(ctx).Result(); err != nil || n != 0 {
				t.Fatalf("leased database holds %d keys (%v), want empty", n, err)
			}
		}
		if err := a.Set(ctx, "owner", "a", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if n, err := b.Exists(ctx, "owner").Result(); err != nil || n != 0 {
			t.Errorf("key written under one lease visible under the other (%d, %v)", n, err)
		}
	})

	// After the subtest the lease is released and its database flushed;
	// with miniredis the server itself is gone.
	if first.db == 0 {
		return
	}
	c := redis.NewClient(&redis.Options{Addr: first.addr, DB: first.db})
	defer c.Close()
	if n, err := c.Exists(ctx, "owner").Result(); err != nil || n != 0 {
		t.Errorf("database %d still holds the test's key after release (%d, %v)", first.db, n, err)
	}
}

func TestRedisURLSelectsLeasedDB(t *testing.T) {
	t.Parallel()
	raw := RedisURL(t)
	opts, err := redis.ParseURL(raw)
	if err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	c := redis.NewClient(opts)
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("ping %s: %v", raw, err)
	}
	if !strings.HasSuffix(raw, "/"+strconv.Itoa(opts.DB)) {
		t.Errorf("URL %q does not end in its database number", raw)
	}
}

// TestAcquireLeaseWaitsForRelease exercises the lease protocol on a private
// in-process server with a single leasable database.
func TestAcquireLeaseWaitsForRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr, stop, err := localenv.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()

	held, err := acquireLease(ctx, admin, []int{3}, time.Second)
	if err != nil {
		t.Fatalf("first lease: %v", err)
	}
	if held.db != 3 {
		t.Fatalf("leased db %d, want 3", held.db)
	}
	user := redis.NewClient(&redis.Options{Addr: addr, DB: 3})
	defer user.Close()
	if err := user.Set(ctx, "left-behind", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}

	if _, err := acquireLease(ctx, admin, []int{3}, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "stayed leased") {
		t.Fatalf("lease while held: err = %v, want a timeout", err)
	}

	got := make(chan error, 1)
	go func() {
		l, err := acquireLease(ctx, admin, []int{3}, 10*time.Second)
		if err == nil {
			err = l.release(ctx)
		}
		got <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if err := held.release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiting lease: %v", err)
	}
	if n, err := user.Exists(ctx, "left-behind").Result(); err != nil || n != 0 {
		t.Errorf("key survived release (%d, %v), want the database flushed", n, err)
	}
	if n, err := admin.Exists(ctx, leaseKeyPrefix+"3").Result(); err != nil || n != 0 {
		t.Errorf("lease key still present after release (%d, %v)", n, err)
	}
}

func TestReleaseKeepsSomeoneElsesLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr, stop, err := localenv.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()

	l, err := acquireLease(ctx, admin, []int{5}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The lease expired and another test took the database.
	if err := admin.Set(ctx, leaseKeyPrefix+"5", "other-token", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := l.release(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := admin.Get(ctx, leaseKeyPrefix+"5").Result(); err != nil || v != "other-token" {
		t.Errorf("other lease = %q, %v; want it untouched", v, err)
	}
}

// Without TEST_REDIS_URL the tests never use whatever answers at the
// default address: they start a server of their own, or use miniredis.
func TestRedisWithoutURLNeverUsesTheDefaultAddress(t *testing.T) {
	t.Parallel()
	opts, own, err := resolveRedis(context.Background(), "", "")
	if err != nil || opts != nil || own != nil {
		t.Fatalf("no URL, no binary: got %v %v %v, want miniredis (nil options)", opts, own, err)
	}
	bin := RedisServerBinary()
	if bin == "" {
		t.Skip("redis-server is not installed")
	}
	opts, own, err = resolveRedis(context.Background(), "", bin)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Stop()
	if opts.Addr != own.Addr || opts.Addr == "127.0.0.1:6379" || opts.Addr == "localhost:6379" {
		t.Errorf("tests would use %s, want the server they started (%s)", opts.Addr, own.Addr)
	}
}

func TestRedisServerRestartsEmpty(t *testing.T) {
	t.Parallel()
	s := StartRedisServer(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Errorf("after a restart without persistence: exists=%d err=%v, want the key gone", n, err)
	}
}
