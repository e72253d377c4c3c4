package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reviewfleet/reviewfleet/store/internal/sqlcdb"
)

// The fleet's singletons (the reconciler's pass, with the rescues and
// admission it makes, and the scheduled bulk reviews' firing) are elected
// with one mechanism: a Postgres session advisory lock. Postgres is the
// ledger's source of truth, so the lock lives where the work it guards is
// recorded, and a Redis flush or failover cannot elect a second leader.
// The lock belongs to the holder's connection: when the holder dies, its
// connection closes and Postgres releases the lock at once, so a
// follower that tries every interval leads within one interval.

// Leadership is a held leader lock. It keeps its connection out of the
// pool until Release.
type Leadership struct {
	conn *pgxpool.Conn
	name string
	once sync.Once
}

// HoldLeader takes the session advisory lock called name without waiting.
// It returns nil when another session holds it. The lock is per schema,
// so schemas side by side (tests) do not exclude each other.
func (s *Store) HoldLeader(ctx context.Context, name string) (*Leadership, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire a connection for lock %s: %w", name, err)
	}
	ok, err := sqlcdb.New(conn).TryNamedLock(ctx, name)
	if err != nil {
		conn.Release()
		return nil, fmt.Errorf("take lock %s: %w", name, err)
	}
	if !ok {
		conn.Release()
		return nil, nil
	}
	return &Leadership{conn: conn, name: name}, nil
}

// ErrLeadershipLost is returned by Check once the lock's session is gone.
var ErrLeadershipLost = errors.New("leader lock lost")

// Check confirms the lock is still held: its session answers and still
// holds it. A holder must stop acting as leader when Check fails, since
// the database released the lock with the session.
func (l *Leadership) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	held, err := sqlcdb.New(l.conn).HoldsNamedLock(ctx, l.name)
	if err != nil {
		return fmt.Errorf("check lock %s: %w: %w", l.name, ErrLeadershipLost, err)
	}
	if !held {
		return fmt.Errorf("check lock %s: %w", l.name, ErrLeadershipLost)
	}
	return nil
}

// Release gives the lock back and returns the connection; a connection
// that cannot unlock is closed, which releases the lock too. It is safe
// to call more than once.
func (l *Leadership) Release() {
	l.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sqlcdb.New(l.conn).ReleaseNamedLock(ctx, l.name); err != nil {
			_ = l.conn.Conn().Close(ctx)
		}
		l.conn.Release()
	})
}

// TryLeader is HoldLeader for a single pass: it returns ok=false when
// another session holds the lock; otherwise release gives it back.
func (s *Store) TryLeader(ctx context.Context, name string) (release func(), ok bool, err error) {
	l, err := s.HoldLeader(ctx, name)
	if err != nil || l == nil {
		return nil, false, err
	}
	return l.Release, true, nil
}
