package agent

import (
	"path"
	"strings"
	"time"
)

// backoff holds the time budget of each tool signature. A signature is the
// tool and its normalised scope: the path_glob for grep, the whole
// repository for find_symbol, the path for read_file and list_dir. Scan
// tools start at the scan budget, the others at the read budget; every
// timeout doubles the signature's next budget, up to the cap. Changing only
// the keyword of a search keeps its backoff.
type backoff struct {
	read, scan, max time.Duration
	timeouts        map[string]int
}

func newBackoff(read, scan, limit time.Duration) *backoff {
	return &backoff{read: read, scan: scan, max: limit, timeouts: map[string]int{}}
}

// isScanTool reports whether tool walks the repository.
func isScanTool(tool string) bool { return tool == toolGrep || tool == toolFindSymbol }

// budget returns the time the next call with signature key may take.
func (b *backoff) budget(tool, key string) time.Duration {
	d := b.read
	if isScanTool(tool) {
		d = b.scan
	}
	for range b.timeouts[key] {
		if d >= b.max {
			break
		}
		d *= 2
	}
	return min(d, b.max)
}

// timedOut records that a call with signature key ran out of time.
func (b *backoff) timedOut(key string) { b.timeouts[key]++ }

// scopeKey returns the backoff signature of a call: the tool and its
// normalised scope.
func scopeKey(tool, scope string) string {
	s := strings.TrimSpace(scope)
	s = strings.TrimPrefix(s, "./")
	if s == "" {
		s = "."
	}
	if tool == toolGrep {
		if s == "." || s == "**" || s == "**/*" {
			s = "**"
		}
		return tool + ":" + s
	}
	return tool + ":" + path.Clean(s)
}
