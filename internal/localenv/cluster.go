package localenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Files reviewfleet keeps inside the data directory, next to PostgreSQL's own.
const (
	portFileName   = "reviewfleet.port" // the port chosen on the first start
	confFileName   = "reviewfleet.conf" // included by postgresql.conf, rewritten on every start
	serverLogName  = "reviewfleet-server.log"
	maxServerLog   = 10 << 20 // the server log is rotated once past this size
	includeLine    = "include_if_exists = '" + confFileName + "'"
	maxSocketPath  = 103 // sun_path is 104 bytes on macOS, 108 on Linux
	socketFileName = ".s.PGSQL.65535"
)

// clusterVersion returns the major version recorded in dir/PG_VERSION, or ""
// when dir is not (yet) a PostgreSQL cluster.
func clusterVersion(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "PG_VERSION"))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read cluster version: %w", err)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("%s is empty", filepath.Join(dir, "PG_VERSION"))
	}
	return v, nil
}

// isEmptyDir reports whether dir is missing or holds no entries.
func isEmptyDir(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return len(entries) == 0, nil
}

// serverConf renders the settings reviewfleet controls: loopback-only TCP on
// port, and the Unix socket inside the data directory (disabled when the
// path would be too long for a socket address).
func serverConf(dataDir string, port int) string {
	socketDir := dataDir
	if len(filepath.Join(dataDir, socketFileName)) > maxSocketPath {
		socketDir = ""
	}
	return fmt.Sprintf(`# Written by reviewfleet on every start; put your own settings in postgresql.conf.
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = %s
`, port, confQuote(socketDir))
}

// confQuote quotes s as a postgresql.conf string value.
func confQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// ensureInclude appends the include of reviewfleet.conf to postgresql.conf
// unless it is already there.
func ensureInclude(dataDir string) error {
	path := filepath.Join(dataDir, "postgresql.conf")
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read server configuration: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == includeLine {
			return nil
		}
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open server configuration: %w", err)
	}
	if _, err := fmt.Fprintf(f, "\n# Port and listen address chosen by reviewfleet.\n%s\n", includeLine); err != nil {
		_ = f.Close()
		return fmt.Errorf("append to server configuration: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("append to server configuration: %w", err)
	}
	return nil
}

// readPortFile returns the port recorded on an earlier start, or 0.
func readPortFile(dataDir string) int {
	b, err := os.ReadFile(filepath.Join(dataDir, portFileName))
	if err != nil {
		return 0
	}
	port, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || port <= 0 || port > 65535 {
		return 0
	}
	return port
}

// pidFile is what postmaster.pid says about a server that holds the data
// directory.
type pidFile struct {
	pid    int
	port   int
	status string // "starting", "ready", "stopping", "standby"; "" before PostgreSQL 10
}

// readPIDFile parses dataDir/postmaster.pid; ok is false when there is none.
func readPIDFile(dataDir string) (pf pidFile, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if errors.Is(err, os.ErrNotExist) {
		return pidFile{}, false, nil
	}
	if err != nil {
		return pidFile{}, false, fmt.Errorf("read postmaster.pid: %w", err)
	}
	pf, err = parsePIDFile(b)
	if err != nil {
		return pidFile{}, false, err
	}
	return pf, true, nil
}

// parsePIDFile reads the fields of postmaster.pid: line 1 the postmaster's
// pid, line 4 its port, line 8 its status.
func parsePIDFile(b []byte) (pidFile, error) {
	lines := strings.Split(string(b), "\n")
	if len(lines) < 4 {
		return pidFile{}, fmt.Errorf("parse postmaster.pid: %d lines, want at least 4", len(lines))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 0 {
		return pidFile{}, fmt.Errorf("parse postmaster.pid: bad pid %q", lines[0])
	}
	port, err := strconv.Atoi(strings.TrimSpace(lines[3]))
	if err != nil || port <= 0 || port > 65535 {
		return pidFile{}, fmt.Errorf("parse postmaster.pid: bad port %q", lines[3])
	}
	pf := pidFile{pid: pid, port: port}
	if len(lines) > 7 {
		pf.status = strings.TrimSpace(lines[7])
	}
	return pf, nil
}

// rotateLog moves the server log aside once it has grown past maxServerLog,
// keeping one previous generation.
func rotateLog(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() < maxServerLog {
		return nil
	}
	if err := os.Rename(path, path+".1"); err != nil {
		return fmt.Errorf("rotate server log: %w", err)
	}
	return nil
}

// logTail returns the last n lines of the file at path, for error messages.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const window = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > window {
		if _, err := f.Seek(fi.Size()-window, io.SeekStart); err != nil {
			return ""
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return ""
	}
	return lastLines(b, n)
}

// lastLines returns the last n non-empty lines of b joined by newlines.
func lastLines(b []byte, n int) string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// withLog appends the tail of the server log to err, when there is one.
func withLog(err error, logPath string) error {
	tail := logTail(logPath, 20)
	if tail == "" {
		return err
	}
	return fmt.Errorf("%w\nlast lines of %s:\n%s", err, logPath, tail)
}
