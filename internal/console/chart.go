package console

import (
	"fmt"
	"sort"
	"time"
)

// chart is a stacked bar chart drawn as SVG on the server: the template
// writes its shapes as elements with presentation attributes, so the
// page's Content Security Policy (no inline styles) holds and the chart
// shows without JavaScript.
type chart struct {
	Title         string
	Width, Height int
	Bars          []bar
	Legend        []legendItem
	Max           int
	Empty         bool
}

type bar struct {
	X, W  int
	Label string
	Total int
	Parts []barPart
}

type barPart struct {
	Y, H  int
	Fill  string
	Name  string
	Count int
}

type legendItem struct {
	Name, Fill string
	X          int
}

var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

var severityFill = map[string]string{"critical": "#8b0000", "high": "#e15759", "medium": "#f28e2b", "low": "#edc948", "info": "#76b7b2"}

// findingCharts groups daily counts into weeks (or months when they span
// more than half a year) and draws them by risk type and by severity.
func findingCharts(counts []findingCount) (string, chart, chart) {
	bucket := "week"
	if len(counts) > 0 {
		lo, hi := counts[0].Day, counts[0].Day
		for _, c := range counts {
			if c.Day.Before(lo) {
				lo = c.Day
			}
			if c.Day.After(hi) {
				hi = c.Day
			}
		}
		if hi.Sub(lo) > 183*24*time.Hour {
			bucket = "month"
		}
	}
	key := func(t time.Time) time.Time {
		t = t.UTC()
		if bucket == "month" {
			return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		}
		d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7)) // Monday
	}
	byRisk := map[time.Time]map[string]int{}
	bySev := map[time.Time]map[string]int{}
	for _, c := range counts {
		k := key(c.Day)
		if byRisk[k] == nil {
			byRisk[k], bySev[k] = map[string]int{}, map[string]int{}
		}
		byRisk[k][c.RiskType] += c.N
		bySev[k][c.Severity] += c.N
	}
	format := "2006-01-02"
	if bucket == "month" {
		format = "2006-01"
	}
	risk := drawStacked("Findings by risk type, per "+bucket, byRisk, format, func(name string, i int) string { return palette[i%len(palette)] }, nil)
	order := []string{"critical", "high", "medium", "low", "info"}
	sev := drawStacked("Findings by severity, per "+bucket, bySev, format, func(name string, i int) string {
		if f, ok := severityFill[name]; ok {
			return f
		}
		return palette[i%len(palette)]
	}, order)
	return bucket, risk, sev
}

const (
	chartW, chartH = 720, 220
	plotTop        = 10
	plotBottom     = 180
	maxBars        = 52
)

func drawStacked(title string, data map[time.Time]map[string]int, format string, fill func(string, int) string, order []string) chart {
	ch := chart{Title: title, Width: chartW, Height: chartH}
	var keys []time.Time
	names := map[string]bool{}
	for k, parts := range data {
		keys = append(keys, k)
		for n := range parts {
			names[n] = true
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Before(keys[j]) })
	if len(keys) > maxBars {
		keys = keys[len(keys)-maxBars:]
	}
	if len(keys) == 0 {
		ch.Empty = true
		return ch
	}
	series := order
	if series == nil {
		for n := range names {
			series = append(series, n)
		}
		sort.Strings(series)
	} else {
		var extra []string
		known := map[string]bool{}
		for _, n := range order {
			known[n] = true
		}
		for n := range names {
			if !known[n] {
				extra = append(extra, n)
			}
		}
		sort.Strings(extra)
		series = append(append([]string{}, order...), extra...)
	}
	colour := map[string]string{}
	x := 0
	for i, n := range series {
		if !names[n] {
			continue
		}
		colour[n] = fill(n, i)
		ch.Legend = append(ch.Legend, legendItem{Name: n, Fill: colour[n], X: x})
		x += 14 + 7*len(n) + 16
	}
	for _, k := range keys {
		t := 0
		for _, v := range data[k] {
			t += v
		}
		ch.Max = max(ch.Max, t)
	}
	slot := min((chartW-40)/len(keys), 48) // a few periods are not drawn as walls
	w := max(slot-4, 2)
	for i, k := range keys {
		b := bar{X: 40 + i*slot, W: w, Label: k.Format(format)}
		y := plotBottom
		for _, n := range series {
			v := data[k][n]
			if v == 0 {
				continue
			}
			h := v * (plotBottom - plotTop) / ch.Max
			if h < 1 {
				h = 1
			}
			y -= h
			b.Parts = append(b.Parts, barPart{Y: y, H: h, Fill: colour[n], Name: n, Count: v})
			b.Total += v
		}
		ch.Bars = append(ch.Bars, b)
	}
	return ch
}

// sparkline draws per-minute counts as bars.
type sparkline struct {
	Title  string
	Width  int
	Height int
	Bars   []bar
	Max    int
}

func drawSparkline(title string, at []time.Time, values []int) sparkline {
	s := sparkline{Title: title, Width: 600, Height: 60}
	for _, v := range values {
		s.Max = max(s.Max, v)
	}
	if len(values) == 0 {
		return s
	}
	slot := s.Width / len(values)
	for i, v := range values {
		h := 0
		if s.Max > 0 {
			h = v * (s.Height - 4) / s.Max
		}
		if v > 0 && h < 1 {
			h = 1
		}
		s.Bars = append(s.Bars, bar{X: i * slot, W: max(slot-1, 1), Total: v, Label: at[i].Format("15:04"),
			Parts: []barPart{{Y: s.Height - h, H: h, Fill: "#4e79a7", Count: v}}})
	}
	return s
}

func fmtUSD(v float64) string {
	if v == 0 {
		return "$0"
	}
	if v < 0.01 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}
