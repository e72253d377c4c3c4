package store

import (
	"context"
	"fmt"
)

// TryLeader takes the session advisory lock called name without waiting.
// It returns ok=false when another process holds it; otherwise release
// gives it back. The lock is per schema, so schemas side by side (tests)
// do not exclude each other, and it disappears with the holder's
// connection if the process dies.
func (s *Store) TryLeader(ctx context.Context, name string) (release func(), ok bool, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("acquire a connection for lock %s: %w", name, err)
	}
	const key = `hashtextextended(coalesce(current_schema(), '') || ':' || $1, 0)`
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+key+`)`, name).Scan(&ok); err != nil {
		conn.Release()
		return nil, false, fmt.Errorf("take lock %s: %w", name, err)
	}
	if !ok {
		conn.Release()
		return nil, false, nil
	}
	return func() {
		ctx := context.WithoutCancel(ctx)
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(`+key+`)`, name); err != nil {
			// The lock would stay with the pooled connection: drop it.
			_ = conn.Conn().Close(ctx)
		}
		conn.Release()
	}, true, nil
}
