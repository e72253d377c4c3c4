package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/telemetry"
)

// newFlags makes a flag set that reports errors instead of exiting.
func newFlags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "YAML configuration file (default: $REVIEWFLEET_CONFIG)")
	setHelp(fs, name, "")
	return fs, cfgPath
}

// parseFlags parses flags wherever they stand among the positional
// arguments (`report ID --format json` as well as `report --format json ID`)
// and returns the positional ones.
func parseFlags(fs *flag.FlagSet, args []string) error {
	_, err := parseArgs(fs, args)
	return err
}

func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, exitError{code: exitUsage, err: err}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func logger(ctx context.Context, stderr io.Writer) *slog.Logger {
	level := slog.LevelWarn
	if v := getenv(ctx, "REVIEWFLEET_LOG_LEVEL"); v != "" {
		_ = level.UnmarshalText([]byte(strings.ToUpper(v)))
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

// open loads the configuration and opens the app.
func open(ctx context.Context, cfgPath string, stderr io.Writer, opts app.Options, edit func(*config.Config)) (*app.App, func(), error) {
	env := envOf(ctx)
	if cfgPath == "" {
		cfgPath = getenv(ctx, "REVIEWFLEET_CONFIG")
	}
	cfg, err := config.LoadEnv(cfgPath, env.lookup)
	if err != nil {
		return nil, nil, err
	}
	for _, w := range config.EnvWarnings(env.environ()) {
		fmt.Fprintln(stderr, "reviewfleet: warning:", w)
	}
	if edit != nil {
		edit(&cfg)
	}
	shutdown, err := telemetry.Setup(ctx, cfg.Telemetry, stderr)
	if err != nil {
		return nil, nil, err
	}
	if opts.Log == nil {
		opts.Log = logger(ctx, stderr)
	}
	if opts.Notices == nil {
		opts.Notices = stderr
	}
	if opts.Getenv == nil {
		opts.Getenv = func(k string) string { return getenv(ctx, k) }
	}
	a, err := app.Open(ctx, cfg, opts)
	if err != nil {
		shutdown()
		return nil, nil, err
	}
	return a, func() { a.Close(); shutdown() }, nil
}

func checkFormat(f string) error {
	switch f {
	case "markdown", "md", "json", "sarif":
		return nil
	}
	return exitError{code: exitUsage, err: fmt.Errorf("unknown --format %q (markdown, json or sarif)", f)}
}
