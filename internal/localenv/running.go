package localenv

import "fmt"

// ErrPostgresStopped is returned by RunningPostgres when the data directory
// holds no running server.
var ErrPostgresStopped = fmt.Errorf("the local Postgres is stopped")

// RunningPostgres returns the server running on dataDir without starting
// one: commands that only read (status, report) must not bring back a
// server the user stopped. It fails with ErrPostgresStopped when none runs.
func RunningPostgres(dataDir string) (*LocalPostgres, error) {
	pf, ok, err := readPIDFile(dataDir)
	if err != nil {
		return nil, err
	}
	if !ok || !processAlive(pf.pid) {
		return nil, fmt.Errorf("%w (data in %s): `reviewfleet local start` or any review starts it again", ErrPostgresStopped, dataDir)
	}
	return &LocalPostgres{dataDir: dataDir, port: pf.port, reused: true}, nil
}

// User returns the superuser name to connect as ("postgres", no password:
// the server trusts connections from 127.0.0.1 only).
func (p *LocalPostgres) User() string { return superuser }
