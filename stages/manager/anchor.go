package manager

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Reason codes that start Decision.Reason.
const (
	ReasonFileNotInChange = "file_not_in_change" // the finding's file is not part of the change
	ReasonInvalidRange    = "invalid_range"      // the range starts below line 1
	ReasonFarFromChange   = "far_from_change"    // the range is outside the anchor window
	ReasonDuplicateOf     = "duplicate_of"       // merged into another finding
	ReasonCapPerFile      = "cap_per_file"       // its file already holds MaxPerFile findings
	ReasonCapPerRiskType  = "cap_per_risk_type"  // its risk type already holds MaxPerRiskType findings
	ReasonCapTotal        = "cap_total"          // the review already holds MaxTotal findings
)

// ReasonCode returns the machine-readable code at the start of a
// Decision.Reason ("far_from_change: 42 lines …" → "far_from_change").
func ReasonCode(reason string) string {
	if i := strings.IndexByte(reason, ':'); i >= 0 {
		return reason[:i]
	}
	return reason
}

// cleanPath normalises a repo-relative path so that "./a.go", "/a.go" and
// "a.go" compare equal.
func cleanPath(p string) string {
	p = strings.TrimLeft(path.Clean(strings.TrimSpace(p)), "/")
	if p == "." {
		return ""
	}
	return p
}

// normaliseChanged cleans the paths of changed and makes sure every line list
// is sorted, copying only the lists that are not. Lists of paths that clean to
// the same name are combined.
func normaliseChanged(changed map[string][]int) map[string][]int {
	out := make(map[string][]int, len(changed))
	for p, ls := range changed {
		key := cleanPath(p)
		if key == "" {
			continue
		}
		if prev, ok := out[key]; ok {
			merged := append(slices.Clone(prev), ls...)
			slices.Sort(merged)
			out[key] = merged
			continue
		}
		if !slices.IsSorted(ls) {
			ls = slices.Clone(ls)
			slices.Sort(ls)
		}
		out[key] = ls
	}
	return out
}

// anchor applies rules 1 and 2 to a finding in file spanning [start, end]
// (already put in order). It reports false with the reason when the finding
// must be dropped.
func anchor(file string, start, end int, changed map[string][]int, window int) (string, bool) {
	lines, ok := changed[file]
	if !ok || file == "" {
		return ReasonFileNotInChange, false
	}
	if start < 1 {
		return fmt.Sprintf("%s: lines %d-%d", ReasonInvalidRange, start, end), false
	}
	window = max(window, 0)
	dist, ok := distanceToChange(start, end, lines)
	if !ok {
		return fmt.Sprintf("%s: no changed lines in file (window %d)", ReasonFarFromChange, window), false
	}
	if dist > window {
		return fmt.Sprintf("%s: %d lines from nearest changed line (window %d)", ReasonFarFromChange, dist, window), false
	}
	return "", true
}

// distanceToChange returns how many lines separate [start, end] from the
// nearest of the ascending lines (0 when the range contains one). It reports
// false when lines is empty.
func distanceToChange(start, end int, lines []int) (int, bool) {
	if len(lines) == 0 {
		return 0, false
	}
	i, _ := slices.BinarySearch(lines, start) // first changed line ≥ start
	best := -1
	if i < len(lines) {
		if lines[i] <= end {
			return 0, true
		}
		best = lines[i] - end
	}
	if i > 0 {
		if d := start - lines[i-1]; best < 0 || d < best {
			best = d
		}
	}
	return best, true
}

// rangeGap returns how many lines separate two ranges, 0 when they overlap.
func rangeGap(aStart, aEnd, bStart, bEnd int) int {
	return max(0, bStart-aEnd, aStart-bEnd)
}
