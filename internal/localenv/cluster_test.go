package localenv

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParsePIDFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    pidFile
		wantErr bool
	}{
		{
			name: "ready server",
			in:   "4242\n/var/data\n1700000000\n54321\n/var/data\n127.0.0.1\n  1234567  98304\nready   \n",
			want: pidFile{pid: 4242, port: 54321, status: "ready"},
		},
		{name: "pre-10 file without status", in: "17\n/d\n1\n5432\n", want: pidFile{pid: 17, port: 5432}},
		{name: "truncated", in: "17\n/d\n", wantErr: true},
		{name: "bad pid", in: "x\n/d\n1\n5432\n", wantErr: true},
		{name: "bad port", in: "17\n/d\n1\n99999\n", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parsePIDFile([]byte(tt.in))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: parsePIDFile = %+v, %v; want %+v, error %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestServerConf(t *testing.T) {
	t.Parallel()
	long := "/" + strings.Repeat("d", 100)
	tests := []struct {
		dir        string
		wantSocket string
	}{
		{"/home/ada/.local/share/reviewfleet/postgres", "unix_socket_directories = '/home/ada/.local/share/reviewfleet/postgres'"},
		{"/srv/it's here", "unix_socket_directories = '/srv/it''s here'"},
		{long, "unix_socket_directories = ''"},
	}
	for _, tt := range tests {
		got := serverConf(tt.dir, 61234)
		for _, want := range []string{"listen_addresses = '127.0.0.1'", "port = 61234", tt.wantSocket} {
			if !strings.Contains(got, want) {
				t.Errorf("serverConf(%q) lacks %q:\n%s", tt.dir, want, got)
			}
		}
	}
}

func TestEnsureIncludeIsIdempotent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	conf := filepath.Join(dir, "postgresql.conf")
	if err := os.WriteFile(conf, []byte("max_connections = 100\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := ensureInclude(dir); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), includeLine); n != 1 {
		t.Errorf("include appears %d times, want 1:\n%s", n, b)
	}
	if !strings.HasPrefix(string(b), "max_connections = 100\n") {
		t.Errorf("existing settings changed:\n%s", b)
	}
}

func TestPortFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		content string
		want    int
	}{
		{"54321\n", 54321},
		{"  6000 ", 6000},
		{"0", 0},
		{"70000", 0},
		{"port", 0},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, portFileName), []byte(tt.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := readPortFile(dir); got != tt.want {
			t.Errorf("readPortFile(%q) = %d, want %d", tt.content, got, tt.want)
		}
	}
	if got := readPortFile(t.TempDir()); got != 0 {
		t.Errorf("readPortFile without a file = %d, want 0", got)
	}
}

func TestLastLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\n\n\nb\n", 5, "a\nb"},
		{"", 3, ""},
		{"only", 1, "only"},
	}
	for _, tt := range tests {
		if got := lastLines([]byte(tt.in), tt.n); got != tt.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestChoosePort(t *testing.T) {
	t.Parallel()
	if got, err := choosePort(6543, 7000); err != nil || got != 6543 {
		t.Errorf("requested port: %d, %v", got, err)
	}
	// A recorded port that is free is kept. Another test of this package
	// may take the port between the two calls (it starts servers on free
	// ports), so a few fresh ports are tried before calling it a failure.
	kept := false
	for range 5 {
		free, err := choosePort(0, 0)
		if err != nil || free <= 0 {
			t.Fatalf("free port: %d, %v", free, err)
		}
		got, err := choosePort(0, free)
		if err != nil {
			t.Fatalf("recorded free port %d: %v", free, err)
		}
		if got == free {
			kept = true
			break
		}
	}
	if !kept {
		t.Error("a free recorded port was never kept")
	}
	// A recorded port someone holds is not chosen.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	held := l.Addr().(*net.TCPAddr).Port
	if got, err := choosePort(0, held); err != nil || got == held || got <= 0 {
		t.Errorf("recorded port %d in use: got %d, %v, want another free port", held, got, err)
	}
}
