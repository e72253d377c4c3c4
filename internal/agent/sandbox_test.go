package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCleanRel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want, err string
	}{
		{"", ".", ""},
		{"  a/b.go ", "a/b.go", ""},
		{"./a//b/../c.go", "a/c.go", ""},
		{"a/../..", "", msgEscape},
		{"..", "", msgEscape},
		{"../x", "", msgEscape},
		{"/etc/passwd", "", msgAbsolute},
		{"/proc/self/environ", "", msgAbsolute},
		{"a\x00b", "", "NUL"},
		// A name the prompt showed Go-quoted is the name inside the quotes,
		// and unquoting never gets past the escape and absolute checks.
		{`"t\tq\"b\\.go"`, "t\tq\"b\\.go", ""},
		{`"src/a\nb.py"`, "src/a\nb.py", ""},
		{`"../x"`, "", msgEscape},
		{`"/etc/passwd"`, "", msgAbsolute},
		{`"a\x00b"`, "", "NUL"},
		{`"unterminated`, "\"unterminated", ""},
	}
	for _, tt := range tests {
		got, err := cleanRel(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("cleanRel(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("cleanRel(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestSandboxReadFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	writeFiles(t, root, map[string]string{"a/ok.txt": "hello\n", "big.txt": strings.Repeat("x", 101)})
	writeFiles(t, outside, map[string]string{"s.txt": "outside"})
	mustSymlink(t, filepath.Join(outside, "s.txt"), filepath.Join(root, "out.txt"))
	mustSymlink(t, "a/ok.txt", filepath.Join(root, "in.txt"))
	mustSymlink(t, filepath.Join(root, "a"), filepath.Join(root, "alias"))
	mustSymlink(t, "missing-target", filepath.Join(root, "dangling"))

	// The root itself reached through a symlink works the same.
	linkRoot := filepath.Join(t.TempDir(), "snap")
	mustSymlink(t, root, linkRoot)

	for _, r := range []string{root, linkRoot} {
		sb, err := newSandbox(r, 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			path, want, err string
		}{
			{"a/ok.txt", "hello\n", ""},
			{"in.txt", "", "in.txt " + msgSymlink},
			{"alias/ok.txt", "", "alias " + msgSymlink},
			{"out.txt", "", "out.txt " + msgSymlink},
			{"a/../../x", "", msgEscape},
			{"big.txt", "", "too large (101 bytes; the limit is 100)"},
			{"a", "", "a is a directory"},
			{"nope.txt", "", "no such file or directory: nope.txt"},
			{"dangling", "", "dangling " + msgSymlink},
			{"/dev/zero", "", msgAbsolute},
		}
		for _, tt := range tests {
			data, _, err := sb.readFile(tt.path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("readFile(%q) error = %v, want %q", tt.path, err, tt.err)
				}
				if strings.Contains(string(data), "outside") {
					t.Errorf("readFile(%q) returned outside content", tt.path)
				}
				continue
			}
			if err != nil || string(data) != tt.want {
				t.Errorf("readFile(%q) = %q, %v; want %q", tt.path, data, err, tt.want)
			}
		}
	}
}

func TestNewSandboxRejectsBadRoots(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{"", filepath.Join(t.TempDir(), "missing"), file} {
		if _, err := newSandbox(root, 10, nil); err == nil {
			t.Errorf("newSandbox(%q) succeeded", root)
		}
	}
}

func TestIsBinary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		data []byte
		want bool
	}{
		{[]byte("plain text\n"), false},
		{[]byte("a\x00b"), true},
		{append([]byte(strings.Repeat("a", 9000)), 0), false}, // NUL past the sniffed prefix
		{nil, false},
	}
	for _, tt := range tests {
		if got := isBinary(tt.data); got != tt.want {
			t.Errorf("isBinary(%d bytes) = %v, want %v", len(tt.data), got, tt.want)
		}
	}
}

// FuzzReadFile checks that no path the model can send reads a file outside
// the root or a denied one.
func FuzzReadFile(f *testing.F) {
	root := f.TempDir()
	outside := f.TempDir()
	for name, body := range map[string]string{"a/b.txt": "inside", "c.txt": "inside", ".env": "DENIED", ".git/config": "DENIED"} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "x"), []byte("OUTSIDE"), 0o644); err != nil {
		f.Fatal(err)
	}
	for link, target := range map[string]string{"out": outside, "rel": "../" + filepath.Base(outside), "envlink": ".env", "gitlink": ".git"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			f.Fatal(err)
		}
	}
	sb, err := newSandbox(root, 1<<20, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { sb.close() })
	for _, seed := range []string{"a/b.txt", "../", "out/x", "rel/x", "a/../../c", "/etc", "a/./b.txt", "....//", "\\..\\x", "a/b.txt/..", "envlink", "gitlink/config", ".git/config", "a/../.env"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		data, _, err := sb.readFile(p)
		if err != nil {
			return
		}
		if string(data) != "inside" {
			t.Fatalf("readFile(%q) = %q", p, data)
		}
	})
}
