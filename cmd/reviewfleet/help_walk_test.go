package main

import (
	"slices"
	"strings"
	"testing"
)

// Every command of the command table and every subcommand answers --help
// with how to call it and what it does, and the top-level help lists them
// all.
func TestEveryCommandHasHelp(t *testing.T) {
	t.Parallel()
	top, _, err := runEnv(t, testEnv{}, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for name := range commands() {
		names := []string{name}
		for _, sub := range subcommands[name] {
			names = append(names, name+" "+sub)
		}
		for _, n := range names {
			out, errOut, err := runEnv(t, testEnv{}, append(strings.Fields(n), "--help")...)
			if err != nil {
				t.Errorf("%s --help: %v", n, err)
				continue
			}
			help := out + errOut
			first, rest, _ := strings.Cut(strings.TrimSpace(help), "\n")
			if !strings.HasPrefix(strings.ToLower(first), "usage: reviewfleet "+name) {
				t.Errorf("%s --help does not start with its usage line:\n%s", n, help)
			}
			if len(strings.Fields(rest)) < 8 {
				t.Errorf("%s --help says too little about what it does:\n%s", n, help)
			}
			for _, sub := range subcommands[name] {
				if !strings.Contains(help, sub) {
					t.Errorf("%s --help does not list its subcommand %s:\n%s", n, sub, help)
				}
			}
		}
		if !strings.Contains(top, "reviewfleet "+name+" ") {
			t.Errorf("the top-level help lacks %s", name)
		}
		for _, sub := range subcommands[name] {
			if !slices.ContainsFunc(strings.Split(top, "\n"), func(l string) bool {
				return strings.Contains(l, "reviewfleet "+name+" ") && strings.Contains(l, sub)
			}) {
				t.Errorf("the top-level help lacks %s %s", name, sub)
			}
		}
	}
	for _, want := range []string{"local    start", "psql [--url]", "--batch ID", "--check"} {
		if !strings.Contains(top, want) {
			t.Errorf("the top-level help lacks %q", want)
		}
	}
}
