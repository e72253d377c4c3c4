package store

// WarmSQL is what a warm session runs when it opens.
var WarmSQL = warmSQL

// Sessions is how many sessions the pool holds, idle or in use.
func (s *Store) Sessions() int { return int(s.pool.Stat().TotalConns()) }
