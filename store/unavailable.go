package store

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// IsUnavailable reports whether err says the database could not be reached
// or could not serve the request for reasons of its own (connection refused
// or lost, server shutting down or starting, too many connections, a pool
// already closed) — an outage to wait out, not a fault of the work.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		c := pgErr.Code
		return strings.HasPrefix(c, "08") || // connection_exception
			strings.HasPrefix(c, "57P") || // admin_shutdown, crash_shutdown, cannot_connect_now
			c == "53300" || // too_many_connections
			c == "40001" || c == "40P01" // serialization failure, deadlock: try again
	}
	return pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "closed pool")
}
