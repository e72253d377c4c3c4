// Package localenv starts the services reviewfleet needs on a laptop when no
// external ones are configured: an in-process Redis (miniredis) when REDIS_URL
// is unset, and a persistent PostgreSQL cluster built from the machine's
// PostgreSQL binaries when DATABASE_URL is unset.
//
// The Postgres cluster lives in a data directory that survives between runs,
// so review history accumulates; a server already running on that directory
// is reused instead of starting a second one, and the server is left running
// when the command exits so the next command starts fast.
package localenv
