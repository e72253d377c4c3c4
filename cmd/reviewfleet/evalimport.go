package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/reviewfleet/reviewfleet/internal/bulk"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/evaluation"
)

// cmdEvalImport turns the public code-review benchmark's golden comments
// into a dataset, fetching each pull request's diff from GitHub with the
// bulk command's client (github.api_url, GITHUB_TOKEN).
func cmdEvalImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("eval import", stderr)
	golden := fs.String("golden", "", "golden comments file: [{\"pr_title\", \"url\", \"comments\": [{\"comment\", \"severity\"}]}]")
	out := fs.String("out", "", "dataset directory to write (one case file and one .patch per pull request)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *golden == "" || *out == "" {
		return exitError{code: exitUsage, err: errors.New("eval import needs --golden FILE.json and --out DIR")}
	}
	cfg, err := config.LoadEnv(cmp.Or(*cfgPath, getenv(ctx, "REVIEWFLEET_CONFIG")), envOf(ctx).lookup)
	if err != nil {
		return err
	}
	f, err := os.Open(*golden)
	if err != nil {
		return exitError{code: exitUsage, err: fmt.Errorf("--golden: %w", err)}
	}
	defer f.Close()
	prs, err := evaluation.ParseBenchmark(f)
	if err != nil {
		return exitError{code: exitUsage, err: fmt.Errorf("%s: %w", *golden, err)}
	}
	client, err := bulk.NewGitHubClient(bulk.GitHubOptions{APIURL: cfg.GitHub.APIURL, Token: getenv(ctx, "GITHUB_TOKEN")})
	if err != nil {
		return err
	}
	done, err := evaluation.Import(ctx, client, prs, *out)
	for _, d := range done {
		fmt.Fprintf(stdout, "%s: %d golden comments (text only: matched by the judge) → %s, %s\n", d.Case, d.Golden, d.CaseFile, d.PatchFile)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d cases to %s; evaluate with: reviewfleet eval --dataset %s --judge-model MODEL\n", len(done), *out, *out)
	return nil
}
