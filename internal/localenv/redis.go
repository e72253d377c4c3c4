package localenv

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
)

// StartRedis starts an in-process Redis server on a free loopback port and
// returns its address (host:port) and a function that stops it.
//
// Key TTLs follow the wall clock (miniredis ClockTTL), so expiring keys such as
// asynq's unique-task locks and server heartbeats behave as they do on a real
// Redis. The data lives in memory and is lost when stop is called or the
// process exits.
func StartRedis() (addr string, stop func(), err error) {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return "", nil, fmt.Errorf("start in-process redis: %w", err)
	}
	return m.Addr(), m.Close, nil
}
