package localenv

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reviewfleet/reviewfleet/internal/syncio"
)

func TestStartPostgresPersistsAcrossRestarts(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dataDir := filepath.Join(reachableDir(t), "cluster")
	var logw syncio.Buffer
	opts := PostgresOptions{DataDir: dataDir, Log: &logw}

	pg, err := StartPostgres(ctx, opts)
	if err != nil {
		t.Fatalf("first start: %v", err)
	}
	t.Cleanup(func() {
		if err := pg.Stop(context.Background()); err != nil {
			t.Errorf("stop at cleanup: %v", err)
		}
	})
	if pg.Reused() {
		t.Error("first start reports a reused server")
	}
	if !strings.Contains(pg.DSN(), "/"+DatabaseName+"?") {
		t.Errorf("DSN %q does not name database %s", pg.DSN(), DatabaseName)
	}
	firstPort := pg.Port()
	if !strings.Contains(logw.String(), "created a PostgreSQL cluster") {
		t.Errorf("log lacks the creation notice:\n%s", logw.String())
	}
	if os.Geteuid() == 0 {
		// The data directory belongs to the unprivileged server account.
		if uid, _, err := ownerOf(dataDir); err != nil || uid == 0 {
			t.Errorf("data directory owner uid = %d (%v), want an unprivileged user", uid, err)
		}
	}

	conn := connect(ctx, t, pg.DSN())
	var listen string
	if err := conn.QueryRow(ctx, "SHOW listen_addresses").Scan(&listen); err != nil {
		t.Fatalf("show listen_addresses: %v", err)
	}
	if listen != "127.0.0.1" {
		t.Errorf("listen_addresses = %q, want 127.0.0.1", listen)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (note text); INSERT INTO kept VALUES ('across restarts')"); err != nil {
		t.Fatalf("create table: %v", err)
	}
	_ = conn.Close(ctx)

	if err := pg.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := waitAccepting(ctx, pg.DSN(), time.Second); err == nil {
		t.Fatal("server still accepts connections after Stop")
	}

	// Two concurrent starts on the stopped cluster: one starts the server,
	// the other reuses it; both end up on the recorded port.
	var wg sync.WaitGroup
	restarted := make([]*LocalPostgres, 2)
	errs := make([]error, 2)
	for i := range restarted {
		wg.Go(func() { restarted[i], errs[i] = StartPostgres(ctx, opts) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("restart %d: %v", i, err)
		}
	}
	pg = restarted[0]
	if restarted[0].Reused() == restarted[1].Reused() {
		t.Errorf("concurrent starts: reused = %v and %v, want exactly one reuse", restarted[0].Reused(), restarted[1].Reused())
	}
	for i, r := range restarted {
		if r.Port() != firstPort {
			t.Errorf("restart %d on port %d, want the recorded port %d", i, r.Port(), firstPort)
		}
	}

	conn = connect(ctx, t, pg.DSN())
	defer conn.Close(ctx)
	var note string
	if err := conn.QueryRow(ctx, "SELECT note FROM kept").Scan(&note); err != nil {
		t.Fatalf("read table after restart: %v", err)
	}
	if note != "across restarts" {
		t.Errorf("note = %q after restart", note)
	}

	stopped, err := StopPostgres(ctx, PostgresOptions{DataDir: dataDir})
	if err != nil || !stopped {
		t.Fatalf("StopPostgres = %v, %v; want true, nil", stopped, err)
	}
	if stopped, err := StopPostgres(ctx, PostgresOptions{DataDir: dataDir}); err != nil || stopped {
		t.Fatalf("second StopPostgres = %v, %v; want false, nil", stopped, err)
	}
}

func connect(ctx context.Context, t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	return conn
}

func TestStartPostgresWithoutBinaries(t *testing.T) {
	t.Parallel()
	_, err := StartPostgres(context.Background(), PostgresOptions{
		DataDir: filepath.Join(t.TempDir(), "data"),
		BinDir:  t.TempDir(),
	})
	if !errors.Is(err, ErrNoPostgresBinaries) {
		t.Fatalf("err = %v, want ErrNoPostgresBinaries", err)
	}
	for _, want := range []string{"initdb, pg_ctl, postgres", "apt-get install postgresql", "brew install postgresql", "DATABASE_URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func TestStartPostgresRefusesForeignDirectory(t *testing.T) {
	t.Parallel()
	if _, err := locateBinaries(context.Background(), "", ""); err != nil {
		t.Skipf("no PostgreSQL binaries: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := StartPostgres(context.Background(), PostgresOptions{DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), "not empty but holds no cluster") {
		t.Fatalf("err = %v, want a refusal to initdb a non-empty directory", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("existing file disturbed: %q, %v", b, err)
	}
	if uid, _, err := ownerOf(filepath.Join(dir, "notes.txt")); err != nil || uid != os.Geteuid() {
		t.Errorf("existing file now owned by uid %d (%v), want %d", uid, err, os.Geteuid())
	}
}

func TestStopPostgresWhenNothingRuns(t *testing.T) {
	t.Parallel()
	stopped, err := StopPostgres(context.Background(), PostgresOptions{DataDir: t.TempDir()})
	if err != nil || stopped {
		t.Fatalf("StopPostgres on an empty directory = %v, %v; want false, nil", stopped, err)
	}
}

func TestDefaultDataDir(t *testing.T) {
	t.Parallel()
	env := map[string]string{"XDG_DATA_HOME": "/srv/xdg", "HOME": "/home/ada"}
	getenv := func(k string) string { return env[k] }
	got, err := dataDirFor(getenv, false)
	if err != nil || got != "/srv/xdg/reviewfleet/postgres" {
		t.Errorf("with XDG_DATA_HOME: %q, %v", got, err)
	}
	env["XDG_DATA_HOME"] = ""
	got, err = dataDirFor(getenv, false)
	if err != nil || got != "/home/ada/.local/share/reviewfleet/postgres" {
		t.Errorf("without XDG_DATA_HOME: %q, %v", got, err)
	}
	env["HOME"] = ""
	if got, err := dataDirFor(getenv, false); err == nil {
		t.Errorf("without XDG_DATA_HOME and HOME: %q, want an error", got)
	}
	// Root's server account cannot enter root's home: its cluster lives
	// where that account can reach it.
	env["HOME"] = "/root"
	if got, err := dataDirFor(getenv, true); err != nil || got != rootDataDir {
		t.Errorf("as root: %q, %v; want %s", got, err, rootDataDir)
	}
	env["XDG_DATA_HOME"] = "/srv/xdg"
	if got, err := dataDirFor(getenv, true); err != nil || got != "/srv/xdg/reviewfleet/postgres" {
		t.Errorf("as root with XDG_DATA_HOME: %q, %v", got, err)
	}
}

// The local cluster changes no permission outside its data directory: a
// home directory closed to others (0700) keeps its mode, whether the
// cluster can live there (as its owner) or is refused (as root, whose
// server account cannot enter it).
func TestStartPostgresLeavesTheHomeDirectoryAlone(t *testing.T) {
	t.Parallel()
	if _, err := locateBinaries(context.Background(), "", ""); err != nil {
		t.Skipf("no PostgreSQL binaries: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	parent := reachableDir(t)
	home := filepath.Join(parent, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	dataDir, err := dataDirFor(func(k string) string { return map[string]string{"HOME": home}[k] }, false)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := StartPostgres(ctx, PostgresOptions{DataDir: dataDir, Ephemeral: true})
	if err == nil {
		t.Cleanup(func() { _ = pg.Stop(context.Background()) })
	}
	switch {
	case os.Geteuid() == 0 && (err == nil || !strings.Contains(err.Error(), "no permission was changed") ||
		!strings.Contains(err.Error(), home)):
		t.Errorf("as root, a cluster under a closed home: %v; want a refusal naming %s", err, home)
	case os.Geteuid() != 0 && err != nil:
		t.Errorf("a cluster under its owner's home: %v", err)
	}
	for dir, want := range map[string]os.FileMode{home: 0o700, parent: 0o755} {
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", dir, fi.Mode().Perm(), err, want)
		}
	}
}

func TestStartPostgresErrorCarriesServerLog(t *testing.T) {
	t.Parallel()
	if _, err := locateBinaries(context.Background(), "", ""); err != nil {
		t.Skipf("no PostgreSQL binaries: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port

	pg, err := StartPostgres(ctx, PostgresOptions{DataDir: filepath.Join(reachableDir(t), "d"), Port: port, Ephemeral: true})
	if err == nil {
		_ = pg.Stop(ctx)
		t.Fatalf("start on busy port %d succeeded", port)
	}
	// The server's own complaint about the port, read from its log file.
	if !strings.Contains(err.Error(), "last lines of") || !strings.Contains(err.Error(), "could not bind") {
		t.Errorf("error lacks the server log tail: %v", err)
	}
}

func TestRunningPostgresDoesNotStartAStoppedServer(t *testing.T) {
	dir := t.TempDir()
	_, err := RunningPostgres(dir)
	if !errors.Is(err, ErrPostgresStopped) || !strings.Contains(err.Error(), "local start") {
		t.Fatalf("RunningPostgres on a stopped cluster: %v", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "postmaster.pid")); !os.IsNotExist(statErr) {
		t.Fatalf("a server was started: %v", statErr)
	}
}
