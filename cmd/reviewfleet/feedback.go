package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/feedback"
	"github.com/reviewfleet/reviewfleet/store"
)

// feedbackSyncer reads the feedback on posted reviews, or is nil without
// GitHub credentials (nothing was posted without them).
func feedbackSyncer(a *app.App) *feedback.Syncer {
	if a.GitHub == nil || !a.GitHub.HasCredentials() {
		return nil
	}
	return &feedback.Syncer{Store: a.Store, Clients: a.GitHub, MaxPullRequests: a.Cfg.Feedback.MaxPullRequests,
		MinRateRemaining: a.Cfg.Feedback.MinRateRemaining, Log: a.Log}
}

// cmdFeedback runs `feedback sync [--repo R]`: one bounded pass reading
// the reactions, replies and merges on the reviews posted.
func cmdFeedback(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, commandHelp["feedback"])
		return nil
	}
	if len(args) == 0 || args[0] != "sync" {
		return exitError{code: exitUsage, err: errors.New("usage: reviewfleet feedback sync [--repo OWNER/REPO]")}
	}
	fs, cfgPath := newFlags("feedback sync", stderr)
	repo := fs.String("repo", "", "only this repository (OWNER/REPO or HOST/OWNER/REPO)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{SkipLLM: true}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	s := feedbackSyncer(a)
	if s == nil {
		return exitError{code: exitUsage, err: errors.New("feedback sync reads GitHub: set GITHUB_TOKEN or a GitHub App (github.app_id)")}
	}
	st, err := s.SyncRepositories(ctx, *repo)
	fmt.Fprintf(stdout, "synced %d pull requests: %d new feedback rows, %d found merged", st.PullRequests, st.Added, st.Merged)
	if st.Stopped {
		fmt.Fprint(stdout, "; stopped early (GitHub rate limit), the next sync resumes")
	}
	fmt.Fprintln(stdout)
	return err
}

// runFeedbackSync syncs every interval until ctx ends, one scheduler at a
// time (a Postgres advisory lock).
func runFeedbackSync(ctx context.Context, a *app.App, s *feedback.Syncer, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		release, ok, err := a.Store.TryLeader(ctx, "feedback-sync")
		if err != nil || !ok {
			continue
		}
		st, err := s.SyncRepositories(ctx, "")
		release()
		if err != nil && ctx.Err() == nil {
			log.Warn("feedback sync", "err", err)
		}
		log.Info("feedback synced", "pull_requests", st.PullRequests, "added", st.Added, "merged", st.Merged, "stopped_early", st.Stopped)
	}
}

// cmdQuality prints the outcomes of posted findings and the resolution
// rate per repository and risk type.
func cmdQuality(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("quality", stderr)
	repo := fs.String("repo", "", "only this repository (OWNER/REPO or HOST/OWNER/REPO)")
	since := fs.String("since", "30d", "findings posted within this long (d = days; also h, m, s)")
	format := fs.String("format", "table", "table or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	age, err := config.ParseAge(*since)
	if err != nil {
		return exitError{code: exitUsage, err: fmt.Errorf("--since: %w", err)}
	}
	if *format != "table" && *format != "json" {
		return exitError{code: exitUsage, err: fmt.Errorf("--format %q: want table or json", *format)}
	}
	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{SkipLLM: true}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	rows, err := a.Store.Quality(ctx, *repo, time.Now().Add(-age))
	if err != nil {
		return err
	}
	return writeQuality(stdout, rows, *format)
}

func writeQuality(w io.Writer, rows []store.QualityRow, format string) error {
	if format == "json" {
		type row struct {
			store.QualityRow
			ResolutionRate float64 `json:"resolution_rate"`
			DismissalRate  float64 `json:"dismissal_rate"`
		}
		out := make([]row, 0, len(rows))
		for _, r := range rows {
			out = append(out, row{r, round3(r.ResolutionRate()), round3(r.DismissalRate())})
		}
		return writeJSON(w, out)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no findings were posted in that window")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REPOSITORY\tRISK TYPE\tPOSTED\tRESOLVED\tDISMISSED\tACKNOWLEDGED\tOPEN\tON MERGED\tRESOLUTION\tDISMISSAL")
	for _, r := range rows {
		risk := r.RiskType
		if risk == "" {
			risk = "(all)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", r.Repo, risk, r.Posted, r.Resolved, r.Dismissed, r.Acknowledged,
			r.Open, r.OnMerged, percent(r.Resolved, r.OnMerged), percent(r.Dismissed, r.Posted))
	}
	return tw.Flush()
}

func percent(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// cmdLearnings lists, shows, disables (or enables) and exports what was
// learned from dismissals per repository.
func cmdLearnings(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const use = "usage: reviewfleet learnings list [--repo R] | show FINGERPRINT [--repo R] | disable FINGERPRINT --repo R [--note TEXT] [--enable] | export --repo R"
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, commandHelp["learnings"])
		return nil
	}
	if len(args) == 0 {
		return exitError{code: exitUsage, err: errors.New(use)}
	}
	sub := args[0]
	fs, cfgPath := newFlags("learnings "+sub, stderr)
	repo := fs.String("repo", "", "the repository (OWNER/REPO or HOST/OWNER/REPO)")
	note := fs.String("note", "", "disable: why (kept with the switch)")
	enable := fs.Bool("enable", false, "disable: switch the learning back on")
	pos, err := parseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	needFP := sub == "show" || sub == "disable"
	switch {
	case sub != "list" && sub != "show" && sub != "disable" && sub != "export":
		return exitError{code: exitUsage, err: errors.New(use)}
	case needFP && len(pos) != 1, !needFP && len(pos) != 0:
		return exitError{code: exitUsage, err: errors.New(use)}
	case (sub == "disable" || sub == "export") && *repo == "":
		return exitError{code: exitUsage, err: fmt.Errorf("learnings %s needs --repo", sub)}
	}
	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{SkipLLM: true}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	all, err := a.Store.Learnings(ctx, *repo)
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		return listLearnings(stdout, all)
	case "export":
		if len(all) == 0 {
			return fmt.Errorf("nothing learned in %s", *repo)
		}
		out, err := feedback.Export(all)
		if err != nil {
			return err
		}
		_, err = stdout.Write(out)
		return err
	}
	l, err := findLearning(all, pos[0])
	if err != nil {
		return err
	}
	if sub == "disable" {
		if err := a.Store.SetLearningDisabled(ctx, l.Repository, l.Fingerprint, !*enable, *note); err != nil {
			return err
		}
		state := "disabled: the finding may be posted again, and findings like it keep their confidence"
		if *enable {
			state = "enabled again"
		}
		fmt.Fprintf(stdout, "learning %s in %s %s\n", short(l.Fingerprint), l.Repository, state)
		return nil
	}
	return showLearning(ctx, a.Store, stdout, l)
}

func findLearning(all []store.Learning, prefix string) (store.Learning, error) {
	var found []store.Learning
	for _, l := range all {
		if strings.HasPrefix(l.Fingerprint, strings.ToLower(prefix)) {
			found = append(found, l)
		}
	}
	switch {
	case len(found) == 0 || prefix == "":
		return store.Learning{}, fmt.Errorf("no learning %q (reviewfleet learnings list)", prefix)
	case len(found) > 1:
		return store.Learning{}, fmt.Errorf("%q names %d learnings: give more of the fingerprint, or --repo", prefix, len(found))
	}
	return found[0], nil
}

func listLearnings(w io.Writer, all []store.Learning) error {
	if len(all) == 0 {
		_, err := fmt.Fprintln(w, "nothing learned yet: no posted finding was dismissed")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LEARNING\tREPOSITORY\tRISK TYPE\tFILE\tDISMISSALS\tLAST\tSTATE\tCLAIM")
	for _, l := range all {
		state := "active"
		if l.Disabled {
			state = "disabled"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", short(l.Fingerprint), l.Repository, l.RiskType, l.File, l.Dismissals,
			l.LastAt.UTC().Format("2006-01-02"), state, clip(l.Claim, 70))
	}
	return tw.Flush()
}

func showLearning(ctx context.Context, st *store.Store, w io.Writer, l store.Learning) error {
	state := "active: not posted again in this repository while its code reads the same; findings of its kind lose confidence"
	if l.Disabled {
		state = "disabled" + strings.TrimSpace(" "+l.Note)
	}
	fmt.Fprintf(w, "learning %s in %s\n  risk type: %s\n  file: %s\n  claim: %s\n  state: %s\n  feedback behind it:\n",
		l.Fingerprint, l.Repository, l.RiskType, l.File, oneLineText(l.Claim), state)
	for _, id := range l.PostIDs {
		fb, err := st.FeedbackOf(ctx, id)
		if err != nil {
			return err
		}
		for _, f := range fb {
			if f.Signal != store.SignalDismiss {
				continue
			}
			what := f.Kind + " " + f.Content
			if f.Body != "" {
				what += ": " + clip(oneLineText(f.Body), 120)
			}
			fmt.Fprintf(w, "  - %s by %s on %s\n", what, f.Author, f.CreatedAt.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }
