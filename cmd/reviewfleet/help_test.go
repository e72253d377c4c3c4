package main

import (
	"strings"
	"testing"
)

// Asking for help is not an error: every command and subcommand exits 0.
func TestHelpExitsZeroEverywhere(t *testing.T) {
	clearEnv(t)
	cmds := [][]string{
		{}, {"review"}, {"status"}, {"report"}, {"bulk"}, {"batch"}, {"batch", "list"}, {"batch", "status"},
		{"worker"}, {"scheduler"}, {"migrate"}, {"prompts"}, {"prompts", "stats"}, {"config"}, {"config", "keys"},
		{"local"}, {"local", "stop"}, {"local", "psql"},
	}
	for _, c := range cmds {
		for _, h := range []string{"-h", "--help"} {
			args := append(append([]string{}, c...), h)
			if _, _, err := runCmd(t, args...); err != nil {
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
