package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Asking for help is not an error: every command and subcommand exits 0.
func TestHelpExitsZeroEverywhere(t *testing.T) {
	t.Parallel()
	cmds := [][]string{
		{}, {"review"}, {"status"}, {"report"}, {"bulk"}, {"batch"}, {"batch", "list"}, {"batch", "status"},
		{"worker"}, {"scheduler"}, {"migrate"}, {"prompts"}, {"prompts", "stats"}, {"config"}, {"config", "keys"},
		{"local"}, {"local", "stop"}, {"local", "psql"}, {"eval"}, {"eval", "import"},
		{"prune"}, {"console"},
	}
	for _, c := range cmds {
		for _, h := range []string{"-h", "--help"} {
			args := append(append([]string{}, c...), h)
			if _, _, err := runEnv(t, testEnv{}, args...); err != nil {
				t.Errorf("reviewfleet %s: %v, want exit 0", strings.Join(args, " "), err)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		out, _, err := runCmd(t, arg)
		if err != nil || !strings.HasPrefix(out, "reviewfleet ") || strings.TrimSpace(strings.TrimPrefix(out, "reviewfleet ")) == "" {
			t.Errorf("%s: %v %q", arg, err, out)
		}
	}
	version = "v9.9.9"
	defer func() { version = "" }()
	if out, _, _ := runCmd(t, "--version"); out != "reviewfleet v9.9.9\n" {
		t.Errorf("ldflags version: %q", out)
	}
}

// Argument mistakes are reported before anything is opened: no notice
// about the LLM endpoint, the database or Redis comes first.
func TestArgumentErrorsComeFirst(t *testing.T) {
	t.Parallel()
	env := testEnv{"DATABASE_URL": "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"review"}, "nothing to review"},
		{[]string{"review", "--repo", t.TempDir()}, "--base and --head"},
		{[]string{"review", "--diff", "/does/not/exist.patch"}, "--diff"},
		{[]string{"review", "--repo", "/does/not/exist", "--base", "a", "--head", "b"}, "--repo"},
	} {
		_, errOut, err := runEnv(t, env, tc.args...)
		var ee exitError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &ee) || ee.code != exitUsage {
			t.Errorf("%v: got %v, want a usage error about %q", tc.args, err, tc.want)
		}
		if strings.Contains(errOut, "LLM") || strings.Contains(errOut, "Postgres") || strings.Contains(errOut, "Redis") {
			t.Errorf("%v: notices before the argument error: %q", tc.args, errOut)
		}
	}
}

// status must not bring back a local Postgres the user stopped: it says
// it is stopped and how to start it.
func TestStatusDoesNotStartAStoppedLocalPostgres(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	env := testEnv{"XDG_DATA_HOME": data}
	for _, args := range [][]string{{"status"}, {"report", "some-id"}, {"local", "psql", "--url"}} {
		_, _, err := runEnv(t, env, args...)
		if err == nil || !strings.Contains(err.Error(), "stopped") || !strings.Contains(err.Error(), "reviewfleet local start") {
			t.Errorf("%v: %v, want: the local Postgres is stopped, and how to start it", args, err)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "reviewfleet", "postgres", "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("a local Postgres was started: %v", err)
	}
}
