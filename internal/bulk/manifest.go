// Package bulk submits many reviews as one batch: entries read from a
// JSON Lines manifest or listed from a GitHub organisation's open pull
// requests, each submitted as a bulk review (deduplicated, resumable), and
// the batch followed until every review ends.
package bulk

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/store"
)

// Entry is one change to review.
type Entry struct {
	Line    int               `json:"-"` // manifest line, or position in a listing
	Repo    string            `json:"repo"`
	Base    string            `json:"base"`
	Head    string            `json:"head"`
	Labels  map[string]string `json:"labels,omitempty"`
	Purpose string            `json:"purpose,omitempty"`
	// HeadRepo is where Head is fetched from when Repo lacks it (a pull
	// request from a fork).
	HeadRepo string `json:"head_repo,omitempty"`
	// PR is the pull request the entry reviews (GitHub listings), recorded
	// with its review so it can be posted.
	PR *store.PullRequest `json:"-"`

	key string // identity within the batch, set by Submit
}

// LineError is one malformed manifest line.
type LineError struct {
	Line int
	Msg  string
}

// ManifestError lists every malformed line of a manifest.
type ManifestError struct{ Lines []LineError }

func (e *ManifestError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the manifest has %d malformed line(s); nothing was submitted:", len(e.Lines))
	for _, l := range e.Lines {
		fmt.Fprintf(&b, "\n  line %d: %s", l.Line, l.Msg)
	}
	return b.String()
}

// maxLine bounds one manifest line (a purpose can be a long PR text).
const maxLine = 1 << 20

// ParseManifest reads a JSON Lines manifest: one object per line with
// repo, base and head (and optional labels and purpose). Blank lines and
// lines starting with # are skipped. Every malformed line is reported, by
// number, in a *ManifestError; then no entry is returned.
func ParseManifest(r io.Reader) ([]Entry, error) {
	out, bad, err := ParseManifestLines(r)
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, &ManifestError{Lines: bad}
	}
	if len(out) == 0 {
		return nil, errors.New("the manifest has no entries")
	}
	return out, nil
}

// ParseManifestLines reads a manifest as ParseManifest does but returns
// its well-formed entries along with its malformed lines, for a check
// that reports both. The error is only for a manifest that cannot be read.
func ParseManifestLines(r io.Reader) ([]Entry, []LineError, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	var out []Entry
	var bad []LineError
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		e, err := parseLine(line)
		if err != nil {
			bad = append(bad, LineError{Line: n, Msg: err.Error()})
			continue
		}
		e.Line = n
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			bad = append(bad, LineError{Line: n + 1, Msg: fmt.Sprintf("longer than %d bytes", maxLine)})
		} else {
			return nil, nil, fmt.Errorf("read manifest: %w", err)
		}
	}
	return out, bad, nil
}

func parseLine(line []byte) (Entry, error) {
	var e Entry
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Entry{}, fmt.Errorf("not a manifest object: %v", err)
	}
	if dec.More() {
		return Entry{}, errors.New("more than one JSON value on the line")
	}
	var missing []string
	for name, v := range map[string]string{"repo": e.Repo, "base": e.Base, "head": e.Head} {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return Entry{}, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	// Whoever writes a manifest line must not point the fleet at a
	// repository on the worker. Plain http to a loopback host is checked
	// against the configuration when the entry is prepared.
	if err := submit.CheckRemoteURL(e.Repo, submit.FromManifest, true); err != nil {
		return Entry{}, fmt.Errorf("repo: %w", err)
	}
	if e.HeadRepo != "" {
		if err := submit.CheckRemoteURL(e.HeadRepo, submit.FromManifest, true); err != nil {
			return Entry{}, fmt.Errorf("head_repo: %w", err)
		}
	}
	return e, nil
}
