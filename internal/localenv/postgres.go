package localenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Timeouts for each wait on the local cluster.
const (
	initdbTimeout = 2 * time.Minute  // initdb of a new cluster
	startTimeout  = 60 * time.Second // pg_ctl start -w
	stopTimeout   = 60 * time.Second // pg_ctl stop -w
	acceptTimeout = 30 * time.Second // a running server starting to accept connections
	lockTimeout   = 3 * time.Minute  // another process starting the same cluster
)

// DatabaseName is the database created in the local cluster for reviewfleet.
const DatabaseName = "reviewfleet"

// superuser is the cluster's superuser, fixed at initdb time.
const superuser = "postgres"

// PostgresOptions configures StartPostgres.
type PostgresOptions struct {
	// DataDir is the cluster's data directory. It persists between runs.
	// Default: DefaultDataDir().
	DataDir string
	// Port is the TCP port on 127.0.0.1. Default 0: the port recorded by an
	// earlier start if it is free, else a free port (then recorded).
	Port int
	// Log receives one-line notices (cluster created, server started,
	// directory permissions changed); reusing a running server is silent.
	// Default: discarded.
	Log io.Writer
	// BinDir holds initdb, pg_ctl and postgres. Default "": search PATH,
	// then the usual installation directories, newest version first.
	BinDir string
	// Ephemeral marks a throwaway cluster (tests): fsync and synchronous
	// commit are off, so a machine crash may lose or corrupt its data.
	// Default false.
	Ephemeral bool
}

// LocalPostgres is a PostgreSQL server serving a local data directory.
type LocalPostgres struct {
	dataDir string
	binDir  string
	port    int
	acct    account
	reused  bool
}

// DefaultDataDir returns where the local cluster lives by default:
// $XDG_DATA_HOME/reviewfleet/postgres, else ~/.local/share/reviewfleet/postgres,
// or for root /var/lib/reviewfleet/postgres.
func DefaultDataDir() (string, error) { return DataDirFrom(os.Getenv) }

// DataDirFrom is DefaultDataDir with XDG_DATA_HOME and HOME read through
// getenv, for a caller running with an environment of its own.
func DataDirFrom(getenv func(string) string) (string, error) {
	return dataDirFor(getenv, os.Geteuid() == 0)
}

// rootDataDir is the local cluster's directory when running as root. The
// server then runs as an unprivileged account, which cannot enter root's
// home (0700); /var/lib is open to it, and nothing outside the data
// directory has to change for it.
const rootDataDir = "/var/lib/reviewfleet/postgres"

func dataDirFor(getenv func(string) string, root bool) (string, error) {
	if xdg := getenv("XDG_DATA_HOME"); xdg != "" && filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "reviewfleet", "postgres"), nil
	}
	if root {
		return rootDataDir, nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("find the default postgres data directory: neither XDG_DATA_HOME nor HOME is set")
	}
	return filepath.Join(home, ".local", "share", "reviewfleet", "postgres"), nil
}

// StartPostgres makes sure a PostgreSQL server is serving opts.DataDir and
// that it has a database named DatabaseName, and returns it.
//
// A directory that is not yet a cluster is initialised (initdb, trust
// authentication, superuser "postgres"). A server already running on the
// directory is reused; otherwise one is started listening on 127.0.0.1 only,
// with its Unix socket inside the data directory. The server keeps running
// after the calling process exits; call Stop (or StopPostgres) to end it.
//
// When running as root, the PostgreSQL programs run as the data directory's
// owner, or as the "postgres" (else "nobody") user for a new cluster; the
// directory is given to that user. No permission outside it is changed: a
// data directory that user cannot reach is refused.
func StartPostgres(ctx context.Context, opts PostgresOptions) (*LocalPostgres, error) {
	dataDir, logw, err := resolveOptions(opts)
	if err != nil {
		return nil, err
	}
	if opts.Port < 0 || opts.Port > 65535 {
		return nil, fmt.Errorf("start local postgres: port %d out of range", opts.Port)
	}
	if err := os.MkdirAll(filepath.Dir(dataDir), 0o755); err != nil {
		return nil, fmt.Errorf("create parent of postgres data directory: %w", err)
	}
	lockCtx, cancel := context.WithTimeout(ctx, lockTimeout)
	unlock, err := lockFile(lockCtx, dataDir+".lock")
	cancel()
	if err != nil {
		return nil, fmt.Errorf("start local postgres: %w", err)
	}
	defer unlock()

	version, err := clusterVersion(dataDir)
	if err != nil {
		return nil, err
	}
	if version == "" {
		if err := checkInitializable(dataDir); err != nil {
			return nil, err
		}
	}
	binDir, err := locateBinaries(ctx, opts.BinDir, version)
	if err != nil {
		return nil, err
	}
	acct, err := accountFor(dataDir)
	if err != nil {
		return nil, err
	}
	if err := prepareDataDir(acct, dataDir); err != nil {
		return nil, err
	}
	p := &LocalPostgres{dataDir: dataDir, binDir: binDir, acct: acct}

	if version == "" {
		if err := p.initdb(ctx); err != nil {
			return nil, err
		}
		fmt.Fprintf(logw, "localenv: created a PostgreSQL cluster in %s\n", dataDir)
	}
	reused, err := p.reuseRunning(ctx)
	if err != nil {
		return nil, err
	}
	if !reused {
		if err := p.start(ctx, opts); err != nil {
			return nil, err
		}
		fmt.Fprintf(logw, "localenv: started PostgreSQL on 127.0.0.1:%d (data in %s, log in %s)\n", p.port, dataDir, p.logPath())
	}
	if err := ensureDatabase(ctx, p.adminDSN()); err != nil {
		return nil, withLog(err, p.logPath())
	}
	return p, nil
}

// StopPostgres stops the server running on opts.DataDir, if any, and
// reports whether there was one. Only DataDir and BinDir are used.
func StopPostgres(ctx context.Context, opts PostgresOptions) (stopped bool, err error) {
	dataDir, _, err := resolveOptions(opts)
	if err != nil {
		return false, err
	}
	pf, ok, err := readPIDFile(dataDir)
	if err != nil {
		return false, err
	}
	if !ok || !processAlive(pf.pid) {
		return false, nil
	}
	version, err := clusterVersion(dataDir)
	if err != nil {
		return false, err
	}
	binDir, err := locateBinaries(ctx, opts.BinDir, version)
	if err != nil {
		return false, err
	}
	acct, err := accountFor(dataDir)
	if err != nil {
		return false, err
	}
	p := &LocalPostgres{dataDir: dataDir, binDir: binDir, acct: acct, port: pf.port}
	if err := p.Stop(ctx); err != nil {
		return false, err
	}
	return true, nil
}

// DSN returns the connection URL of the reviewfleet database, for example
// postgres://postgres@127.0.0.1:54321/reviewfleet?sslmode=disable.
func (p *LocalPostgres) DSN() string { return p.dsn(DatabaseName) }

// Port returns the TCP port the server listens on at 127.0.0.1.
func (p *LocalPostgres) Port() int { return p.port }

// DataDir returns the absolute path of the cluster's data directory.
func (p *LocalPostgres) DataDir() string { return p.dataDir }

// Reused reports whether the server was already running when StartPostgres
// was called (rather than started by it).
func (p *LocalPostgres) Reused() bool { return p.reused }

// Stop shuts the server down (fast mode: open sessions are ended) and waits
// for it to exit. Stopping a server that is not running is not an error.
func (p *LocalPostgres) Stop(ctx context.Context) error {
	pf, ok, err := readPIDFile(p.dataDir)
	if err != nil {
		return err
	}
	if !ok || !processAlive(pf.pid) {
		return nil
	}
	args := []string{"stop", "-D", p.dataDir, "-m", "fast", "-w", "-t", strconv.Itoa(int(stopTimeout / time.Second))}
	if out, err := p.run(ctx, stopTimeout+10*time.Second, "pg_ctl", args...); err != nil {
		return withLog(fmt.Errorf("stop postgres on %s: %w: %s", p.dataDir, err, out), p.logPath())
	}
	return nil
}

func (p *LocalPostgres) dsn(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(superuser),
		Host:     "127.0.0.1:" + strconv.Itoa(p.port),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// adminDSN points at the always-present postgres database.
func (p *LocalPostgres) adminDSN() string { return p.dsn("postgres") }

func (p *LocalPostgres) logPath() string { return filepath.Join(p.dataDir, serverLogName) }

func resolveOptions(opts PostgresOptions) (dataDir string, logw io.Writer, err error) {
	dataDir = opts.DataDir
	if dataDir == "" {
		if dataDir, err = DefaultDataDir(); err != nil {
			return "", nil, err
		}
	}
	if dataDir, err = filepath.Abs(dataDir); err != nil {
		return "", nil, fmt.Errorf("resolve postgres data directory: %w", err)
	}
	logw = opts.Log
	if logw == nil {
		logw = io.Discard
	}
	return dataDir, logw, nil
}
