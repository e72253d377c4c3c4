package localenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// locateBinaries finds the directory holding initdb, pg_ctl and postgres;
// for an existing cluster it must hold the cluster's major version.
func locateBinaries(ctx context.Context, binDir, clusterMajor string) (string, error) {
	candidates := binCandidates(binDir, os.Getenv("PATH"), wellKnownBinGlobs)
	return findBinDir(candidates, clusterMajor, func(dir string) (string, error) {
		return serverMajor(ctx, dir)
	})
}

// serverMajor runs `postgres --version` from dir (allowed as root).
func serverMajor(ctx context.Context, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(dir, "postgres"), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("run %s --version: %w", filepath.Join(dir, "postgres"), err)
	}
	return parseMajor(string(out))
}

// accountFor picks who runs the PostgreSQL programs for dataDir: when root,
// the owner of an existing directory unless that is root itself, else an
// unprivileged account.
func accountFor(dataDir string) (account, error) {
	acct, err := serverAccount()
	if err != nil || !acct.switched() {
		return acct, err
	}
	uid, gid, err := ownerOf(dataDir)
	if err != nil || uid == 0 {
		return acct, nil
	}
	return accountByID(uid, gid), nil
}

// prepareDataDir creates dataDir (mode 0700) and, when running as root,
// gives it to the server account. It changes no permission outside
// dataDir: a directory the server account cannot reach (root's 0700
// home) is refused, naming the closed directory and a place to use
// instead.
func prepareDataDir(acct account, dataDir string) error {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("create postgres data directory: %w", err)
	}
	closed, err := acct.closedAncestor(dataDir)
	if err != nil {
		return err
	}
	if closed != "" {
		return fmt.Errorf("the local PostgreSQL runs as user %s (it refuses to run as root), which cannot enter %s to reach %s; "+
			"no permission was changed: set XDG_DATA_HOME to a directory it can reach (root's default is %s), or set DATABASE_URL",
			acct.name, closed, dataDir, rootDataDir)
	}
	return acct.chownTree(dataDir)
}

// checkInitializable refuses a directory that is neither empty nor a cluster,
// before anything in it is touched.
func checkInitializable(dataDir string) error {
	empty, err := isEmptyDir(dataDir)
	if err != nil {
		return fmt.Errorf("inspect postgres data directory: %w", err)
	}
	if !empty {
		return fmt.Errorf("postgres data directory %s is not empty but holds no cluster (no PG_VERSION); empty it or choose another directory", dataDir)
	}
	return nil
}

// initdb creates a new cluster in the data directory, which
// checkInitializable has found empty.
func (p *LocalPostgres) initdb(ctx context.Context) error {
	args := []string{
		"-D", p.dataDir, "-U", superuser, "--auth=trust",
		"--encoding=UTF8", "--locale=C",
	}
	if out, err := p.run(ctx, initdbTimeout, "initdb", args...); err != nil {
		return fmt.Errorf("initdb %s: %w\n%s", p.dataDir, err, lastLines(out, 20))
	}
	if err := ensureInclude(p.dataDir); err != nil {
		return err
	}
	return nil
}

// reuseRunning adopts a live server on the data directory, waiting for it
// to accept connections. It reports false when no server is running.
func (p *LocalPostgres) reuseRunning(ctx context.Context) (bool, error) {
	pf, ok, err := readPIDFile(p.dataDir)
	if err != nil || !ok || !processAlive(pf.pid) {
		// A damaged or stale postmaster.pid is the server's to sort out.
		return false, nil
	}
	p.port = pf.port
	if err := waitAccepting(ctx, p.adminDSN(), acceptTimeout); err != nil {
		return false, withLog(fmt.Errorf("postgres process %d holds %s but does not accept connections on port %d (if no server is running there, remove %s): %w",
			pf.pid, p.dataDir, pf.port, filepath.Join(p.dataDir, "postmaster.pid"), err), p.logPath())
	}
	p.reused = true
	return true, nil
}

// start writes the listen settings and starts the server with pg_ctl,
// retrying once on a fresh port if an automatically chosen one was taken
// in the meantime.
func (p *LocalPostgres) start(ctx context.Context, opts PostgresOptions) error {
	if err := ensureInclude(p.dataDir); err != nil {
		return err
	}
	if err := rotateLog(p.logPath()); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		port, err := choosePort(opts.Port, readPortFile(p.dataDir))
		if err != nil {
			return err
		}
		p.port = port
		if err := p.writeOwned(portFileName, strconv.Itoa(port)+"\n"); err != nil {
			return err
		}
		conf := serverConf(p.dataDir, port)
		if opts.Ephemeral {
			conf += "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
		}
		if err := p.writeOwned(confFileName, conf); err != nil {
			return err
		}
		args := []string{"start", "-D", p.dataDir, "-l", p.logPath(), "-w", "-t", strconv.Itoa(int(startTimeout / time.Second))}
		out, err := p.run(ctx, startTimeout+10*time.Second, "pg_ctl", args...)
		if err == nil {
			return nil
		}
		if opts.Port == 0 && attempt == 1 && !portFree(port) && !processAliveFromPIDFile(p.dataDir) {
			// Someone took the port between our check and the server's bind.
			if rmErr := os.Remove(filepath.Join(p.dataDir, portFileName)); rmErr != nil {
				return fmt.Errorf("forget taken port: %w", rmErr)
			}
			continue
		}
		return withLog(fmt.Errorf("start postgres on %s (port %d): %w: %s", p.dataDir, port, err, strings.TrimSpace(string(out))), p.logPath())
	}
}

func processAliveFromPIDFile(dataDir string) bool {
	pf, ok, err := readPIDFile(dataDir)
	return err == nil && ok && processAlive(pf.pid)
}

// writeOwned writes a small file in the data directory, readable only by the
// server account.
func (p *LocalPostgres) writeOwned(name, content string) error {
	path := filepath.Join(p.dataDir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return p.acct.chownTree(path)
}

// run runs one of the PostgreSQL programs as the server account, bounded by
// timeout, and returns its combined output.
func (p *LocalPostgres) run(ctx context.Context, timeout time.Duration, program string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(p.binDir, program), args...)
	cmd.Dir = "/" // the account may not be allowed into our working directory
	cmd.Env = serverEnv()
	cmd.WaitDelay = 5 * time.Second
	p.acct.prepare(cmd)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return out, fmt.Errorf("%s timed out after %s: %w", program, timeout, ctx.Err())
	}
	return out, err
}

// serverEnv is our environment without PG* variables, which would
// otherwise redirect the PostgreSQL programs (PGDATA, PGPORT, ...).
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// choosePort returns requested if set, else recorded if it is free, else a
// free port picked by the kernel.
func choosePort(requested, recorded int) (int, error) {
	if requested != 0 {
		return requested, nil
	}
	if recorded != 0 && portFree(recorded) {
		return recorded, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port for postgres: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("pick a free port for postgres: %w", err)
	}
	return port, nil
}

// portFree reports whether 127.0.0.1:port can be listened on.
func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// waitAccepting polls dsn until a connection succeeds or timeout passes.
func waitAccepting(ctx context.Context, dsn string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var lastErr error
	for {
		attemptCtx, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(attemptCtx, dsn)
		if err == nil {
			err = conn.Ping(attemptCtx)
			_ = conn.Close(context.Background())
		}
		cancelAttempt()
		if err == nil {
			return nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("no connection within %s: %w", timeout, lastErr)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ensureDatabase creates the reviewfleet database unless it exists.
func ensureDatabase(ctx context.Context, adminDSN string) error {
	ctx, cancel := context.WithTimeout(ctx, acceptTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		return fmt.Errorf("connect to local postgres: %w", err)
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", DatabaseName).Scan(&exists); err != nil {
		return fmt.Errorf("check for database %s: %w", DatabaseName, err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{DatabaseName}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database: created concurrently
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database %s: %w", DatabaseName, err)
	}
	return nil
}
