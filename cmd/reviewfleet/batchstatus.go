package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/bulk"
	"github.com/reviewfleet/reviewfleet/internal/untrusted"
	"github.com/reviewfleet/reviewfleet/store"
)

// batchView is a batch as `batch status --format json` writes it.
type batchView struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	Source    string            `json:"source"`
	Status    string            `json:"status"`
	Labels    map[string]string `json:"labels"`
	CreatedAt time.Time         `json:"created_at"`
	Entries   entriesView       `json:"entry_counts"`
	Progress  progressView      `json:"review_counts"`
	Items     []entryView       `json:"entries"`
}

// entriesView splits the batch's entries by what became of them.
type entriesView struct {
	Total         int  `json:"total"`
	NewReviews    int  `json:"new_reviews"`
	Linked        int  `json:"linked"`
	NotSubmitted  int  `json:"could_not_be_submitted"`
	StillToSubmit int  `json:"still_to_submit"`
	AllSubmitted  bool `json:"all_submitted"`
}

// progressView counts the batch's reviews (a review two entries share
// counts once) by status, with their LLM usage.
type progressView struct {
	Total     int   `json:"total"`
	Done      int   `json:"done"`
	Failed    int   `json:"failed"`
	Running   int   `json:"running"`
	Queued    int   `json:"queued"`
	LLMCalls  int   `json:"llm_calls"`
	TokensIn  int64 `json:"tokens_in"`
	TokensOut int64 `json:"tokens_out"`
}

// entryView is one entry of a batch and its review.
type entryView struct {
	Line     int               `json:"line"`
	Repo     string            `json:"repo"`
	Base     string            `json:"base"`
	Head     string            `json:"head"`
	Labels   map[string]string `json:"labels"`
	ReviewID string            `json:"review_id,omitempty"`
	Status   string            `json:"status"`
	Stage    string            `json:"stage,omitempty"`
	// DuplicateOf is the identical review a linked entry shares, and
	// DuplicateOfLine the line of this batch that owns it (absent when
	// an earlier batch does).
	DuplicateOf     string         `json:"duplicate_of,omitempty"`
	DuplicateOfLine int            `json:"duplicate_of_line,omitempty"`
	Findings        map[string]int `json:"findings"`
	Error           string         `json:"error,omitempty"`
}

func loadBatchView(ctx context.Context, st *store.Store, id string) (batchView, store.Batch, store.BatchProgress, error) {
	b, err := st.GetBatch(ctx, id)
	if err != nil {
		return batchView{}, b, store.BatchProgress{}, err
	}
	// Entries first, then reviews: an entry recorded in between is then
	// counted among the reviews, never an entry's review missing.
	c, err := st.BatchEntryCounts(ctx, id)
	if err != nil {
		return batchView{}, b, store.BatchProgress{}, err
	}
	rows, err := st.BatchReviews(ctx, id)
	if err != nil {
		return batchView{}, b, store.BatchProgress{}, err
	}
	p, err := st.GetBatchProgress(ctx, id)
	if err != nil {
		return batchView{}, b, p, err
	}
	v := batchView{
		ID: b.ID, Name: b.Name, Source: b.Source, Labels: b.Labels, CreatedAt: b.CreatedAt.UTC(),
		Status: batchState(b, p),
		Entries: entriesView{Total: c.Entries, NewReviews: c.New, Linked: c.Linked, NotSubmitted: c.Errors,
			StillToSubmit: c.Pending(), AllSubmitted: b.Status != store.BatchSubmitting},
		Progress: progressView{Total: p.Reviews, Done: p.Done, Failed: p.Failed, Running: p.Running, Queued: p.Queued,
			LLMCalls: p.LLMCalls, TokensIn: p.TokensIn, TokensOut: p.TokensOut},
		Items: []entryView{},
	}
	if v.Labels == nil {
		v.Labels = map[string]string{}
	}
	for _, r := range rows {
		e := entryView{Line: r.Line, Repo: r.Repo, Base: r.BaseRef, Head: r.HeadRef, Labels: r.Labels, ReviewID: r.ReviewID,
			Status: r.Status, Stage: r.Stage, Findings: r.Findings, Error: r.Error}
		if e.Labels == nil {
			e.Labels = map[string]string{}
		}
		if r.Linked {
			e.DuplicateOf, e.DuplicateOfLine = r.ReviewID, r.LinkedLine
		}
		v.Items = append(v.Items, e)
	}
	return v, b, p, nil
}

func batchStatus(ctx context.Context, st *store.Store, id, format string, w io.Writer) error {
	v, b, p, err := loadBatchView(ctx, st, id)
	if err != nil {
		return err
	}
	switch format {
	case "json":
		return writeJSON(w, v)
	case "csv":
		return entriesTable(v.Items, true).writeCSV(w)
	}
	fmt.Fprintf(w, "batch     %s\nname      %s\nsource    %s\nstatus    %s\n", b.ID, untrusted.OneLine(b.Name),
		untrusted.OneLine(b.Source), v.Status)
	if len(b.Labels) > 0 {
		fmt.Fprintf(w, "labels    %s\n", untrusted.OneLine(labelText(b.Labels)))
	}
	counts := store.EntryCounts{Entries: v.Entries.Total, New: v.Entries.NewReviews,
		Linked: v.Entries.Linked, Errors: v.Entries.NotSubmitted, Recorded: v.Entries.Total - v.Entries.StillToSubmit}
	fmt.Fprintf(w, "entries   %d: %s\n", v.Entries.Total, bulk.EntrySummary(counts))
	fmt.Fprintf(w, "reviews   %d (a review linked entries share counts once): %d done, %d failed, %d running, %d queued\n",
		p.Reviews, p.Done, p.Failed, p.Running, p.Queued)
	fmt.Fprintf(w, "llm       %d calls, %d tokens in, %d out\n", p.LLMCalls, p.TokensIn, p.TokensOut)
	if eta, ok := bulk.ETA(p, time.Now()); ok {
		fmt.Fprintf(w, "eta       %s\n", eta.Round(time.Second))
	}
	fmt.Fprintf(w, "progress  %s\n\n", bulk.Line(b, p, counts, time.Now()))
	return entriesTable(v.Items, false).writeText(w)
}

// entriesTable is one row per entry of a batch. For a reader the
// review a linked entry shares is named by its line in the batch when it
// has one; for a program (csv) both the review and the line are columns.
func entriesTable(items []entryView, csv bool) *table {
	t := &table{header: []string{"LINE", "REPO", "BASE", "HEAD", "LABELS", "REVIEW", "STATUS",
		"CRITICAL", "HIGH", "MEDIUM", "LOW", "INFO", "DUPLICATE OF", "ERROR"}}
	if csv {
		t.header = []string{"line", "repo", "base", "head", "labels", "review_id", "status",
			"critical", "high", "medium", "low", "info", "duplicate_of", "duplicate_of_line", "error"}
	}
	for _, e := range items {
		cells := []string{strconv.Itoa(e.Line), e.Repo, e.Base, e.Head, labelText(e.Labels), e.ReviewID, e.Status}
		for _, sev := range severities {
			cells = append(cells, strconv.Itoa(e.Findings[sev]))
		}
		switch {
		case csv:
			line := ""
			if e.DuplicateOfLine > 0 {
				line = strconv.Itoa(e.DuplicateOfLine)
			}
			cells = append(cells, e.DuplicateOf, line, e.Error)
		case e.DuplicateOfLine > 0:
			cells = append(cells, "line "+strconv.Itoa(e.DuplicateOfLine), oneLine(e.Error))
		default:
			cells = append(cells, e.DuplicateOf, oneLine(e.Error))
		}
		t.add(cells...)
	}
	return t
}
