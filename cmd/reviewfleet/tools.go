package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/prompts"
)

// stringList collects a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func cmdPrompts(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] != "stats" && wantsHelp(args) {
		fmt.Fprint(stdout, commandHelp["prompts stats"])
		return nil
	}
	if len(args) == 0 || args[0] != "stats" {
		return exitError{code: exitUsage, err: errors.New("usage: reviewfleet prompts stats --diff FILE [--diff FILE…]")}
	}
	fs := flag.NewFlagSet("prompts stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	setHelp(fs, "prompts stats", "")
	var files stringList
	fs.Var(&files, "diff", "unified diff file (repeatable)")
	dir := fs.String("prompts-dir", "", "directory of prompt overrides")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	files = append(files, fs.Args()...)
	if len(files) == 0 {
		return exitError{code: exitUsage, err: errors.New("give at least one --diff FILE")}
	}
	set, err := prompts.Load(*dir)
	if err != nil {
		return err
	}
	var stats []prompts.FileStat
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			return fmt.Errorf("read diff: %w", err)
		}
		parsed, err := diff.Parse(data)
		if err != nil {
			return fmt.Errorf("parse %s: %w", name, err)
		}
		for _, f := range parsed {
			if skip, _ := diff.Classify(f, diff.ClassifyOptions{}); skip {
				continue
			}
			stats = append(stats, set.Stats(f.Path(), f.Text()))
		}
	}
	return prompts.WriteStatsTable(stdout, stats)
}

const configUsage = `usage: reviewfleet config keys

Lists every configuration key (as written in a --config YAML file) with the environment variable
that sets it; the environment wins over the file. Defaults and their reasons: config.example.yaml.
`

func cmdConfig(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if wantsHelp(args) {
		fmt.Fprint(stdout, configUsage)
		return nil
	}
	if len(args) != 1 || args[0] != "keys" {
		return exitError{code: exitUsage, err: errors.New("usage: reviewfleet config keys")}
	}
	for _, k := range config.Keys() {
		fmt.Fprintf(stdout, "%-40s %s\n", k.Path, k.Env)
	}
	return nil
}
