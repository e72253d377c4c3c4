package repoconfig

import (
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// chain lists the files that apply to p, root first.
func (c *Config) chain(p string) []struct {
	dir string
	f   File
} {
	var out []struct {
		dir string
		f   File
	}
	if c == nil {
		return out
	}
	dirs := []string{""}
	parts := strings.Split(path.Dir(p), "/")
	for i := range parts {
		if d := strings.Join(parts[:i+1], "/"); d != "." && d != "" {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		if f, ok := c.dirs[d]; ok {
			out = append(out, struct {
				dir string
				f   File
			}{d, f})
		}
	}
	return out
}

// Ignored reports whether a configuration file above p ignores it, and
// which one.
func (c *Config) Ignored(p string) (bool, string) {
	for _, l := range c.chain(p) {
		rel := p
		if l.dir != "" {
			rel = strings.TrimPrefix(p, l.dir+"/")
		}
		for _, g := range l.f.Ignore {
			if ok, _ := doublestar.Match(g, rel); ok {
				return true, path.Join(l.dir, FileName)
			}
		}
	}
	return false, ""
}

// For returns the rules that apply to file p.
func (c *Config) For(p string) review.Rules {
	var r review.Rules
	var instr []string
	for _, l := range c.chain(p) {
		if s := strings.TrimSpace(l.f.Instructions); s != "" {
			instr = append(instr, s)
		}
		for k, v := range l.f.Thresholds {
			if r.Thresholds == nil {
				r.Thresholds = map[string]float64{}
			}
			r.Thresholds[strings.ToLower(k)] = v
		}
		for _, d := range l.f.DisabledRiskTypes {
			d = strings.ToLower(strings.TrimSpace(d))
			if !slices.Contains(r.DisabledRiskTypes, d) {
				r.DisabledRiskTypes = append(r.DisabledRiskTypes, d)
			}
		}
	}
	r.Instructions = strings.Join(instr, "\n\n")
	return r
}
