package feedback_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/githubfake"
	"github.com/reviewfleet/reviewfleet/internal/render"
)

// A scripted month: twenty pull requests, three findings each, on which
// other people react, reply, fix code and merge (or close, or leave open)
// by a script whose outcomes are known. The sync, run in bounded passes
// that resume where the last stopped, makes the views count exactly what
// the script did: the computed resolution rate equals the scripted one.
func TestScriptedMonthResolutionRate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	w.syncer.MaxPullRequests = 3
	acts := []string{"fixed", "thumbs-down", "false-positive-reply", "thumbs-up", "untouched", "fixed", "wont-fix-reply", "question-reply"}
	var wantResolved, wantDismissed, wantAcknowledged, wantOnMerged, posted int
	const prs = 20
	for k := 1; k <= prs; k++ {
		h1, h2 := fmt.Sprintf("%040x", 2*k), fmt.Sprintf("%040x", 2*k+1)
		w.push(k, h1)
		var found []render.Finding
		for j := range 3 {
			line := 2 + 10*j
			found = append(found, finding(int64(j+1), "robustness", fmt.Sprintf("stmt%d of change %d drops an error", line, k), line, line))
		}
		if res := w.reviewAndPost(t, k, h1, found); res.New != 3 {
			t.Fatalf("pull request %d: %+v, want 3 posted", k, res)
		}
		posted += 3
		state := "merged"
		switch {
		case k%5 == 0:
			state = "open"
		case k%4 == 3:
			state = "closed"
		}
		var hunks []string
		for j, f := range found {
			act := acts[(3*k+j)%len(acts)]
			id := w.commentOn(t, k, f)
			dismissed := false
			switch act {
			case "fixed":
				hunks = append(hunks, fmt.Sprintf("@@ -%d,1 +%d,1 @@\n-stmt%d()\n+checked%d()\n", f.LineStart, f.LineStart, f.LineStart, f.LineStart))
			case "thumbs-down":
				w.gh.React(id, "dev", "-1")
				dismissed = true
			case "false-positive-reply":
				w.gh.Reply(id, "dev", "this is a false positive, the error is checked by the caller")
				dismissed = true
			case "wont-fix-reply":
				w.gh.Reply(id, "dev", "Won't fix: legacy path")
				dismissed = true
			case "thumbs-up":
				w.gh.React(id, "dev", "+1")
			case "question-reply":
				w.gh.Reply(id, "dev", "which error do you mean?")
			}
			switch {
			case dismissed:
				wantDismissed++
			case act == "fixed" && state == "merged":
				wantResolved++
			case act == "thumbs-up":
				wantAcknowledged++
			}
			if state == "merged" {
				wantOnMerged++
			}
		}
		w.push(k, h2)
		var changed []githubfake.File // what the later push changed, if anything
		if len(hunks) > 0 {
			changed = []githubfake.File{{Path: "a.go", Status: "modified", Patch: strings.Join(hunks, "")}}
		}
		w.gh.SetCompare("acme", "api", h1, h2, changed)
		switch state {
		case "merged":
			w.gh.Merge("acme", "api", k)
		case "closed":
			w.gh.CloseUnmerged("acme", "api", k)
		}
	}
	// Bounded passes: three pull requests each, resuming after the last.
	synced := 0
	for pass := 0; pass < prs/3+1; pass++ {
		st, err := w.syncer.SyncRepositories(ctx, "acme/api")
		if err != nil {
			t.Fatal(err)
		}
		if st.PullRequests > 3 {
			t.Fatalf("pass %d read %d pull requests, more than its bound", pass, st.PullRequests)
		}
		synced += st.PullRequests
	}
	if synced != prs {
		t.Fatalf("the passes read %d pull requests, want each of the %d once", synced, prs)
	}
	rows, err := w.st.Quality(ctx, "", time.Now().Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	total := rows[len(rows)-1]
	if total.Posted != posted || total.Resolved != wantResolved || total.Dismissed != wantDismissed ||
		total.Acknowledged != wantAcknowledged || total.OnMerged != wantOnMerged {
		t.Fatalf("computed %+v, scripted posted %d resolved %d dismissed %d acknowledged %d on merged %d",
			total, posted, wantResolved, wantDismissed, wantAcknowledged, wantOnMerged)
	}
	want := float64(wantResolved) / float64(wantOnMerged)
	if total.ResolutionRate() != want || wantResolved == 0 || wantResolved == wantOnMerged {
		t.Fatalf("resolution rate %.3f, scripted %.3f (%d of %d)", total.ResolutionRate(), want, wantResolved, wantOnMerged)
	}
	t.Logf("scripted month: %d posted, resolution rate %.3f (%d/%d), %d dismissed", posted, want, wantResolved, wantOnMerged, wantDismissed)
}
