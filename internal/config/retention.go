package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Retention configures `reviewfleet prune`, which deletes old history.
type Retention struct {
	// OlderThan is the age past which reviews are pruned, with a d (days)
	// suffix besides Go's h, m and s: "90d", "12h" (default 90d; --older-than).
	OlderThan string `yaml:"older_than"`
	// KeepVerdicts keeps reviews, findings and verdicts and drops only the
	// stored prompts, replies, expert transcripts and reports (default
	// false; --keep-verdicts).
	KeepVerdicts bool `yaml:"keep_verdicts"`
	// BatchSize bounds the rows each prune statement deletes, each in its
	// own short transaction (default 1000; --batch-size).
	BatchSize int `yaml:"batch_size"`
}

// ParseAge parses an age such as "90d", "36h" or "1d12h": Go durations
// with a d (24-hour day) unit added. It must be positive.
func ParseAge(s string) (time.Duration, error) {
	orig := strings.TrimSpace(s)
	s = orig
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.ParseUint(s[:i], 10, 31)
		if err != nil {
			return 0, fmt.Errorf("bad age %q: want a number of days before d, like 90d", orig)
		}
		days = time.Duration(n) * 24 * time.Hour
		s = s[i+1:]
	}
	var rest time.Duration
	if s != "" {
		var err error
		if rest, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("bad age %q: want a duration like 90d or 12h", orig)
		}
	}
	if d := days + rest; d > 0 {
		return d, nil
	}
	return 0, fmt.Errorf("bad age %q: it must be positive, like 90d or 12h", orig)
}
