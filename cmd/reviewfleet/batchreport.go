package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/reviewfleet/reviewfleet/store"
)

var severities = []string{"critical", "high", "medium", "low", "info"}

// batchReportView is a batch report as `batch report --format json`
// writes it.
type batchReportView struct {
	ID            string       `json:"id"`
	Name          string       `json:"name"`
	Repositories  []repoView   `json:"repositories"`
	FailedEntries []failedView `json:"failed_entries"`
	LLMCalls      int          `json:"llm_calls"`
	TokensIn      int64        `json:"tokens_in"`
	TokensOut     int64        `json:"tokens_out"`
}

// repoView is one repository's part of a batch report.
type repoView struct {
	Repo        string         `json:"repo"`
	Reviews     int            `json:"reviews"`
	Done        int            `json:"done"`
	Failed      int            `json:"failed"`
	FailedItems int            `json:"failed_items"`
	Findings    map[string]int `json:"findings"`
	LLMCalls    int            `json:"llm_calls"`
	TokensIn    int64          `json:"tokens_in"`
	TokensOut   int64          `json:"tokens_out"`
}

// failedView is an entry that could not be submitted or whose review
// failed.
type failedView struct {
	Line     int    `json:"line"`
	Repo     string `json:"repo"`
	Base     string `json:"base"`
	Head     string `json:"head"`
	ReviewID string `json:"review_id,omitempty"`
	Error    string `json:"error"`
}

func loadBatchReport(ctx context.Context, st *store.Store, id string) (batchReportView, error) {
	b, err := st.GetBatch(ctx, id)
	if err != nil {
		return batchReportView{}, err
	}
	sums, err := st.BatchRepoSummaries(ctx, id)
	if err != nil {
		return batchReportView{}, err
	}
	fails, err := st.BatchFailures(ctx, id)
	if err != nil {
		return batchReportView{}, err
	}
	v := batchReportView{ID: b.ID, Name: b.Name, Repositories: []repoView{}, FailedEntries: []failedView{}}
	for _, s := range sums {
		v.Repositories = append(v.Repositories, repoView{Repo: s.Repo, Reviews: s.Reviews, Done: s.Done, Failed: s.Failed,
			FailedItems: s.FailedItems, Findings: s.Findings, LLMCalls: s.LLMCalls, TokensIn: s.TokensIn, TokensOut: s.TokensOut})
		v.LLMCalls, v.TokensIn, v.TokensOut = v.LLMCalls+s.LLMCalls, v.TokensIn+s.TokensIn, v.TokensOut+s.TokensOut
	}
	for _, f := range fails {
		v.FailedEntries = append(v.FailedEntries, failedView{Line: f.Line, Repo: f.Repo, Base: f.BaseRef, Head: f.HeadRef,
			ReviewID: f.ReviewID, Error: f.Error})
	}
	return v, nil
}

// batchReport writes a batch's findings and LLM usage per repository and
// its failed entries: as Markdown, JSON, or CSV (one row per repository;
// `batch status --format csv` lists every entry).
func batchReport(ctx context.Context, st *store.Store, id, format string, w io.Writer) error {
	v, err := loadBatchReport(ctx, st, id)
	if err != nil {
		return err
	}
	switch format {
	case "json":
		return writeJSON(w, v)
	case "csv":
		return reposTable(v.Repositories, true).writeCSV(w)
	}
	fmt.Fprintf(w, "# Batch %s (%s)\n\n## Repositories\n\n", v.ID, mdCell(v.Name))
	if len(v.Repositories) == 0 {
		fmt.Fprintln(w, "No review of this batch yet.")
	} else if err := reposTable(v.Repositories, false).writeMarkdown(w); err != nil {
		return err
	}
	if len(v.FailedEntries) > 0 {
		fmt.Fprintf(w, "\n## Failed entries\n\n")
		t := &table{header: []string{"Line", "Repository", "Change", "Review", "Error"}}
		for _, f := range v.FailedEntries {
			t.add(strconv.Itoa(f.Line), f.Repo, f.Base+".."+f.Head, f.ReviewID, oneLine(f.Error))
		}
		if err := t.writeMarkdown(w); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(w, "\n## Cost\n\n%d LLM calls, %d tokens in, %d tokens out (reviews linked from earlier batches cost nothing here).\n",
		v.LLMCalls, v.TokensIn, v.TokensOut)
	return err
}

// reposTable is one row per repository of a batch report.
func reposTable(repos []repoView, csv bool) *table {
	t := &table{header: []string{"Repository", "Reviews", "Done", "Failed", "Failed items", "Critical", "High", "Medium",
		"Low", "Info", "LLM calls", "Tokens in", "Tokens out"}}
	if csv {
		t.header = []string{"repo", "reviews", "done", "failed", "failed_items", "critical", "high", "medium", "low", "info",
			"llm_calls", "tokens_in", "tokens_out"}
	}
	for _, r := range repos {
		cells := []string{r.Repo, strconv.Itoa(r.Reviews), strconv.Itoa(r.Done), strconv.Itoa(r.Failed), strconv.Itoa(r.FailedItems)}
		for _, sev := range severities {
			cells = append(cells, strconv.Itoa(r.Findings[sev]))
		}
		t.add(append(cells, strconv.Itoa(r.LLMCalls), strconv.FormatInt(r.TokensIn, 10), strconv.FormatInt(r.TokensOut, 10))...)
	}
	return t
}
