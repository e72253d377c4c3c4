package localenv

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestVersionKeyOrdersNewestFirst(t *testing.T) {
	t.Parallel()
	tests := []struct {
		dir  string
		want int
	}{
		{"/usr/lib/postgresql/16/bin", 16000},
		{"/usr/lib/postgresql/9.6/bin", 9006},
		{"/usr/pgsql-15/bin", 15000},
		{"/opt/homebrew/opt/postgresql@17/bin", 17000},
		{"/usr/local/pgsql/bin", 0},
		{"/Applications/Postgres.app/Contents/Versions/latest/bin", 0},
	}
	for _, tt := range tests {
		if got := versionKey(tt.dir); got != tt.want {
			t.Errorf("versionKey(%q) = %d, want %d", tt.dir, got, tt.want)
		}
	}
}

func TestParseMajor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		out     string
		want    string
		wantErr bool
	}{
		{"postgres (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)\n", "15", false},
		{"postgres (PostgreSQL) 17.0\n", "17", false},
		{"postgres (PostgreSQL) 18beta1\n", "18", false},
		{"postgres (PostgreSQL) 9.6.24\n", "9.6", false},
		{"something else 15\n", "", true},
	}
	for _, tt := range tests {
		got, err := parseMajor(tt.out)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseMajor(%q) = %q, %v; want %q, error %v", tt.out, got, err, tt.want, tt.wantErr)
		}
	}
}

// fakeInstall creates dir with executable stand-ins for the named programs.
func fakeInstall(t *testing.T, dir string, programs ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range programs {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFindBinDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	v12 := fakeInstall(t, filepath.Join(root, "pg", "12", "bin"), pgBinaries...)
	v16 := fakeInstall(t, filepath.Join(root, "pg", "16", "bin"), pgBinaries...)
	partial := fakeInstall(t, filepath.Join(root, "partial"), "initdb", "pg_ctl")
	glob := filepath.Join(root, "pg", "*", "bin")
	majors := map[string]string{v12: "12", v16: "16"}
	majorOf := func(dir string) (string, error) {
		if m, ok := majors[dir]; ok {
			return m, nil
		}
		return "", errors.New("not a fake install")
	}

	tests := []struct {
		name       string
		binDir     string
		pathEnv    string
		globs      []string
		wantMajor  string
		want       string
		wantErrSub string
	}{
		{name: "glob matches newest first", globs: []string{glob}, want: v16},
		{name: "PATH before globs", pathEnv: v12, globs: []string{glob}, want: v12},
		{name: "PATH entry lacking postgres is skipped", pathEnv: partial, globs: []string{glob}, want: v16},
		{name: "existing cluster picks its version", globs: []string{glob}, wantMajor: "12", want: v12},
		{name: "explicit BinDir only", binDir: v12, pathEnv: v16, want: v12},
		{name: "explicit BinDir without binaries", binDir: partial, globs: []string{glob}, wantErrSub: partial},
		{name: "no version match", globs: []string{glob}, wantMajor: "14", wantErrSub: "PostgreSQL 14 cluster"},
		{name: "nothing to search", wantErrSub: "empty search list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := findBinDir(binCandidates(tt.binDir, tt.pathEnv, tt.globs), tt.wantMajor, majorOf)
			if tt.wantErrSub != "" {
				if !errors.Is(err, ErrNoPostgresBinaries) || !strings.Contains(err.Error(), tt.wantErrSub) {
					t.Fatalf("err = %v, want ErrNoPostgresBinaries mentioning %q", err, tt.wantErrSub)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("findBinDir = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestBinCandidatesDeduplicates(t *testing.T) {
	t.Parallel()
	got := binCandidates("", strings.Join([]string{"/a", "", "/b", "/a"}, string(os.PathListSeparator)), nil)
	if want := []string{"/a", "/b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("binCandidates = %v, want %v", got, want)
	}
}
