package console

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"
)

// pageNames are the templates that render whole pages; each is parsed
// with the layout and the shared partials.
var pageNames = []string{"login", "home", "reviews", "review", "batches", "batch", "fleet", "repo", "search", "error"}

func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("parse console template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

var funcs = template.FuncMap{
	"ts": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04:05")
		case *time.Time:
			if v == nil || v.IsZero() {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04:05")
		}
		return "—"
	},
	"dur": func(d time.Duration) string {
		if d <= 0 {
			return "—"
		}
		return d.Round(time.Millisecond).String()
	},
	"ms": func(n int64) string {
		if n <= 0 {
			return "—"
		}
		return (time.Duration(n) * time.Millisecond).Round(time.Millisecond).String()
	},
	"usd":   fmtUSD,
	"conf":  func(x float64) string { return fmt.Sprintf("%.2f", x) },
	"short": func(s string) string { return shorten(s, 12) },
	"lines": func(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") },
	"diffClass": func(line string) string {
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			return "meta"
		case strings.HasPrefix(line, "+"):
			return "add"
		case strings.HasPrefix(line, "-"):
			return "del"
		case strings.HasPrefix(line, "@@"):
			return "hunk"
		}
		return ""
	},
	"sevClass": func(s string) string {
		if _, ok := severityRank[s]; ok {
			return "sev-" + s
		}
		return "sev-other"
	},
	"statusClass": func(s string) string {
		switch s {
		case "queued", "running", "done", "failed", "cancelled", "submitted", "submitting":
			return "st-" + s
		}
		return "st-other"
	},
	"add":  func(a, b int) int { return a + b },
	"ref":  func(ref, sha string) string { return firstNonEmpty(ref, shorten(sha, 12)) },
	"join": strings.Join,
	"fmtf": func(f string, x float64) string { return fmt.Sprintf(f, x) },
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// page is what every template receives.
type page struct {
	Title string
	Nav   string
	User  principal
	Data  any
	Live  string // the events URL live.js follows, if any
}

// render writes a page; a template error becomes a 500 before anything
// is sent.
func (c *Console) render(w http.ResponseWriter, r *http.Request, name string, data any) {
	var buf bytes.Buffer
	if err := c.execute(&buf, r, name, data); err != nil {
		c.opts.Log.Error("console: render", "page", name, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// renderTo writes a page after the status was set.
func (c *Console) renderTo(w http.ResponseWriter, name string, data any) {
	if err := c.pages[name].ExecuteTemplate(w, "layout", page{Title: titles[name], Nav: name, Data: data}); err != nil {
		c.opts.Log.Error("console: render", "page", name, "err", err)
	}
}

var titles = map[string]string{
	"login": "Sign in", "home": "Overview", "reviews": "Reviews", "review": "Review", "batches": "Batches",
	"batch": "Batch", "fleet": "Fleet", "repo": "Repository", "search": "Search", "error": "Error",
}

func (c *Console) execute(buf *bytes.Buffer, r *http.Request, name string, data any) error {
	p := page{Title: titles[name], Nav: name, User: who(r.Context()), Data: data}
	if l, ok := data.(interface{ live() string }); ok {
		p.Live = l.live()
	}
	if t, ok := data.(interface{ title() string }); ok {
		p.Title = t.title()
	}
	return c.pages[name].ExecuteTemplate(buf, "layout", p)
}

// fail answers with an error page; internal errors are logged, not shown.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, status int, msg string, err error) {
	if err != nil {
		c.opts.Log.Error("console: "+msg, "path", r.URL.Path, "err", err)
	}
	var buf bytes.Buffer
	if c.execute(&buf, r, "error", errorData{Status: status, Message: msg}) != nil {
		http.Error(w, msg, status)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

type errorData struct {
	Status  int
	Message string
}
