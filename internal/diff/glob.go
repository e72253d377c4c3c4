package diff

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// MatchGlob reports whether the slash-separated path name matches pattern.
// Within a segment, pattern uses path.Match syntax (*, ?, [a-z], \ escapes).
// A "**" segment matches any number of segments, none included. A pattern
// without a slash matches the base name at any depth ("*.md"); a pattern with
// one is anchored at the repository root (a leading slash is allowed); a
// trailing slash matches everything under that directory ("docs/").
func MatchGlob(pattern, name string) (bool, error) {
	segs, err := globSegments(pattern)
	if err != nil {
		return false, err
	}
	return matchSegments(segs, strings.Split(name, "/"))
}

// CheckGlob reports whether pattern is a valid MatchGlob pattern.
func CheckGlob(pattern string) error {
	segs, err := globSegments(pattern)
	if err != nil {
		return err
	}
	for _, s := range segs {
		if _, err := path.Match(s, ""); err != nil {
			return fmt.Errorf("glob %q: bad segment %q: %w", pattern, s, err)
		}
	}
	return nil
}

// globSegments normalises pattern and splits it into segments.
func globSegments(pattern string) ([]string, error) {
	if strings.TrimSpace(pattern) == "" || pattern == "/" {
		return nil, errors.New("empty glob pattern")
	}
	p := pattern
	anchored := strings.Contains(strings.TrimSuffix(p, "/"), "/")
	if strings.HasSuffix(p, "/") {
		p += "**"
	}
	if !anchored {
		p = "**/" + p
	}
	p = strings.TrimPrefix(p, "/")
	return strings.Split(p, "/"), nil
}

// matchSegments matches pattern segments against name segments.
func matchSegments(pat, name []string) (bool, error) {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true, nil
			}
			for i := 0; i <= len(name); i++ {
				ok, err := matchSegments(pat, name[i:])
				if err != nil || ok {
					return ok, err
				}
			}
			return false, nil
		}
		if len(name) == 0 {
			return false, nil
		}
		ok, err := path.Match(pat[0], name[0])
		if err != nil {
			return false, fmt.Errorf("match glob segment %q: %w", pat[0], err)
		}
		if !ok {
			return false, nil
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0, nil
}
