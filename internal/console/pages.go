package console

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// pageSize is how many rows a list page shows.
const pageSize = 50

func (c *Console) queryCtx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), c.opts.QueryTimeout)
}

type homeData struct {
	Reviews []reviewRow
	Batches []batchRow
}

func (c *Console) home(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := c.queryCtx(r)
	defer cancel()
	reviews, err := c.listReviews(ctx, cursor{}, 25)
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "could not load the recent reviews", err)
		return
	}
	batches, err := c.listBatches(ctx, cursor{}, 10)
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "could not load the recent batches", err)
		return
	}
	c.render(w, r, "home", homeData{Reviews: reviews, Batches: batches})
}

type listData[T any] struct {
	Rows []T
	Next string
}

func (c *Console) reviewList(w http.ResponseWriter, r *http.Request) {
	before, _ := parseCursor(r.URL.Query().Get("before"))
	ctx, cancel := c.queryCtx(r)
	defer cancel()
	rows, err := c.listReviews(ctx, before, pageSize)
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "could not load the reviews", err)
		return
	}
	d := listData[reviewRow]{Rows: rows}
	if len(rows) == pageSize {
		d.Next = cursor{At: rows[len(rows)-1].CreatedAt, ID: rows[len(rows)-1].ID}.String()
	}
	c.render(w, r, "reviews", d)
}

func validID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36
}

type reviewPageData struct{ reviewDetail }

func (d reviewPageData) title() string { return "Review " + d.ID }

func (c *Console) reviewPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !validID(id) {
		c.fail(w, r, http.StatusNotFound, "no such review", nil)
		return
	}
	ctx, cancel := c.queryCtx(r)
	defer cancel()
	d, err := c.loadReview(ctx, id)
	if errors.Is(err, errNotFound) {
		c.fail(w, r, http.StatusNotFound, "no such review", nil)
		return
	}
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "could not load the review", err)
		return
	}
	c.render(w, r, "review", reviewPageData{d})
}

var downloadTypes = map[string]struct{ ctype, ext string }{
	"md":    {"text/markdown; charset=utf-8", "md"},
	"json":  {"application/json", "json"},
	"sarif": {"application/sarif+json", "sarif"},
}

// download serves a review's stored report as a file: never rendered as
// a page, so no markup in it can run.
func (c *Console) download(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	format, isReport := strings.CutPrefix(r.PathValue("file"), "report.")
	dt, ok := downloadTypes[format]
	if !validID(id) || !ok || !isReport {
		c.fail(w, r, http.StatusNotFound, "no such report", nil)
		return
	}
	ctx, cancel := c.queryCtx(r)
	defer cancel()
	doc, err := c.report(ctx, id, format)
	if errors.Is(err, errNotFound) {
		c.fail(w, r, http.StatusNotFound, "this review has no stored report (yet)", nil)
		return
	}
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "could not load the report", err)
		return
	}
	w.Header().Set("Content-Type", dt.ctype)
	w.Header().Set("Content-Disposition", `attachment; filename="review-`+id+`.`+dt.ext+`"`)
	_, _ = w.Write(doc)
}

func (c *Console) batchList(w http.ResponseWriter, r *http.Request) {
	before, _ := parseCursor(r.URL.Query().Get("before"))
	ctx, cancel := c.queryCtx(r)
	defer cancel()
	rows, err := c.listBatches(ctx, before, pageSize)
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "could not load the batches", err)
		return
	}
	d := listData[batchRow]{Rows: rows}
	if len(rows) == pageSize {
		d.Next = cursor{At: rows[len(rows)-1].CreatedAt, ID: rows[len(rows)-1].ID}.String()
	}
	c.render(w, r, "batches", d)
}

type batchPageData struct {
	Batch      batchRow
	Repos      []repoSummary
	Entries    []batchEntry
	Filter     entryFilter
	Next       int
	CanCancel  bool
	Statuses   []string
	Severities []string
}

func (d batchPageData) live() string  { return "/batches/" + d.Batch.ID + "/events" }
func (d batchPageData) title() string { return "Batch " + firstNonEmpty(d.Batch.Name, d.Batch.ID) }

var (
	entryStatuses = []string{"queued", "running", "done", "failed", "unsubmitted"}
	severities    = []string{"critical", "high", "medium", "low", "info"}
)

func oneOf(v string, allowed []string) string {
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	return ""
}

func (c *Console) batchPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !validID(id) {
		c.fail(w, r, http.StatusNotFound, "no such batch", nil)
		return
	}
	q := r.URL.Query()
	f := entryFilter{Status: oneOf(q.Get("status"), entryStatuses), Repo: strings.TrimSpace(q.Get("repo")),
		Label: strings.TrimSpace(q.Get("label")), Severity: oneOf(q.Get("severity"), severities)}
	f.After, _ = strconv.Atoi(q.Get("after"))
	ctx, cancel := c.queryCtx(r)
	defer cancel()
	b, err := c.getBatch(ctx, id)
	if errors.Is(err, errNotFound) {
		c.fail(w, r, http.StatusNotFound, "no such batch", nil)
		return
	}
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "could not load the batch", err)
		return
	}
	d := batchPageData{Batch: b, Filter: f, Statuses: entryStatuses, Severities: severities,
		CanCancel: c.opts.Canceller != nil && who(r.Context()).Admin() && b.Status != "cancelled" && b.P.Queued+b.P.Running > 0}
	if d.Repos, err = c.batchRepos(ctx, id); err != nil {
		c.fail(w, r, http.StatusInternalServerError, "could not load the batch", err)
		return
	}
	if d.Entries, err = c.batchEntries(ctx, id, f, pageSize); err != nil {
		c.fail(w, r, http.StatusInternalServerError, "could not load the batch", err)
		return
	}
	if len(d.Entries) == pageSize {
		d.Next = d.Entries[len(d.Entries)-1].Line
	}
	c.render(w, r, "batch", d)
}

// cancelBatch is the console's one write: an admin stops a batch's queued
// and running reviews.
func (c *Console) cancelBatch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if c.opts.Canceller == nil || !who(r.Context()).Admin() {
		c.fail(w, r, http.StatusForbidden, "cancelling a batch needs the admin role", nil)
		return
	}
	if !validID(id) {
		c.fail(w, r, http.StatusNotFound, "no such batch", nil)
		return
	}
	ctx, cancel := c.queryCtx(r)
	defer cancel()
	n, err := c.opts.Canceller(ctx, id)
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "could not cancel the batch", err)
		return
	}
	c.opts.Log.Info("console: batch cancelled", "batch", id, "by", who(r.Context()).User, "reviews_stopped", n)
	http.Redirect(w, r, "/batches/"+id, http.StatusSeeOther)
}

type fleetPageData struct {
	fleetData
	ReviewsChart, CallsChart, LimitedChart sparkline
}

func (c *Console) fleetPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := c.queryCtx(r)
	defer cancel()
	d, err := c.loadFleet(ctx)
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "could not load the fleet", err)
		return
	}
	var at []time.Time
	var revs, calls, limited []int
	for _, m := range d.Minutes {
		at = append(at, m.At)
		revs, calls, limited = append(revs, m.Reviews), append(calls, m.Calls), append(limited, m.RateLimited)
	}
	c.render(w, r, "fleet", fleetPageData{fleetData: d,
		ReviewsChart: drawSparkline("Reviews finished per minute", at, revs),
		CallsChart:   drawSparkline("Model calls per minute", at, calls),
		LimitedChart: drawSparkline("Rate-limited calls (429) per minute", at, limited)})
}

type repoPageData struct{ repoData }

func (d repoPageData) title() string { return "Repository " + d.Repo }

func (c *Console) repoPage(w http.ResponseWriter, r *http.Request) {
	repo := strings.TrimSpace(r.URL.Query().Get("repo"))
	if repo == "" {
		http.Redirect(w, r, "/search?in=repo", http.StatusSeeOther)
		return
	}
	before, _ := parseCursor(r.URL.Query().Get("before"))
	ctx, cancel := c.queryCtx(r)
	defer cancel()
	d, err := c.loadRepo(ctx, repo, before)
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "could not load the repository", err)
		return
	}
	c.render(w, r, "repo", repoPageData{d})
}

type searchData struct {
	Q, In string
	Hits  []searchHit
	Done  bool
}

func (c *Console) searchPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := searchData{Q: q.Get("q"), In: oneOf(q.Get("in"), []string{"repo", "pr", "file", "text"})}
	if d.In == "" {
		d.In = "text"
	}
	if strings.TrimSpace(d.Q) != "" {
		ctx, cancel := c.queryCtx(r)
		defer cancel()
		hits, err := c.search(ctx, d.In, d.Q)
		if err != nil {
			c.fail(w, r, http.StatusInternalServerError, "the search failed", err)
			return
		}
		d.Hits, d.Done = hits, true
	}
	c.render(w, r, "search", d)
}
