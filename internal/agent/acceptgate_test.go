package agent

import (
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

func TestAcceptGateChecks(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	sb, err := newSandbox(root, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &facts{}
	f.add(toolReadFile, "internal/auth/session.go lines 9-11 of 18\n9: func (s *Store) Lookup(id string) *Session {\n10: \tsess := s.byID[id]\n11: \treturn sess\n")
	f.add(toolGrep, "1 matching lines in 1 files\ninternal/auth/handler.go:4: \ts.Touch(id)\n")
	const file = "internal/auth/session.go"
	tests := []struct {
		name   string
		check  Check
		passed bool
		detail string
	}{
		{"file exists", Check{Kind: CheckFileExists, Path: file}, true, file + " exists"},
		{"file missing", Check{Kind: CheckFileExists, Path: "nope.go"}, false, "no such file or directory: nope.go"},
		{"file outside", Check{Kind: CheckFileExists, Path: "../x"}, false, msgEscape},
		{"quote in range", Check{Kind: CheckContentContains, Path: file, StartLine: 9, EndLine: 11, Match: "sess := s.byID[id]"}, true, "found in " + file + " lines 9-11"},
		{"quote across lines, reindented", Check{Kind: CheckContentContains, Path: file, StartLine: 10, EndLine: 11, Match: "sess := s.byID[id] return sess"}, true, "found in " + file + " lines 10-11"},
		{"quote outside the range", Check{Kind: CheckContentContains, Path: file, StartLine: 1, EndLine: 5, Match: "sess := s.byID[id]"}, false, "not found in " + file + " lines 1-5"},
		{"single line", Check{Kind: CheckContentContains, Path: file, StartLine: 10, Match: "s.byID[id]"}, true, "found in " + file + " lines 10-10"},
		{"whole file", Check{Kind: CheckContentContains, Path: file, Match: "sess.Expires.Add(ttl)"}, true, "found in " + file + " lines 1-18"},
		{"end clamped", Check{Kind: CheckContentContains, Path: file, StartLine: 17, EndLine: 99, Match: "Add(ttl)"}, true, "found in " + file + " lines 17-18"},
		{"invented quote", Check{Kind: CheckContentContains, Path: file, Match: "if sess == nil"}, false, "not found in " + file + " lines 1-18"},
		{"range past the end", Check{Kind: CheckContentContains, Path: file, StartLine: 40, EndLine: 41, Match: "abc"}, false, "lines 40-41 are outside " + file + " (18 lines)"},
		{"tool fact with line numbers", Check{Kind: CheckToolFact, Match: "10: sess := s.byID[id]"}, true, "the match appears in a tool result of this run"},
		{"tool fact across lines", Check{Kind: CheckToolFact, Match: "sess := s.byID[id]\n  return sess"}, true, "the match appears in a tool result of this run"},
		{"tool fact from grep", Check{Kind: CheckToolFact, Match: "s.Touch(id)"}, true, "the match appears in a tool result of this run"},
		{"tool fact never seen", Check{Kind: CheckToolFact, Match: "sess.Expires.Add(ttl)"}, false, "no tool result of this run contains the match"},
	}
	for _, tt := range tests {
		passed, detail := runCheck(sb, f, tt.check)
		if passed != tt.passed || detail != tt.detail {
			t.Errorf("%s: %v %q, want %v %q", tt.name, passed, detail, tt.passed, tt.detail)
		}
	}
}

func TestAcceptGateOnlyRequiredChecksDecide(t *testing.T) {
	t.Parallel()
	sb, err := newSandbox(sampleRepo(t), 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	good := Check{Kind: CheckFileExists, Path: "README.md", Required: true}
	badOptional := Check{Kind: CheckToolFact, Match: "never returned", Required: false}
	badRequired := Check{Kind: CheckFileExists, Path: "gone.md", Required: true}
	tests := []struct {
		checks []Check
		ok     bool
	}{
		{nil, true},
		{[]Check{good}, true},
		{[]Check{good, badOptional}, true},
		{[]Check{good, badOptional, badRequired}, false},
	}
	for i, tt := range tests {
		results, ok := acceptGate(sb, &facts{}, tt.checks, review.VerdictInconclusive, citation{})
		if ok != tt.ok || len(results) != len(tt.checks) {
			t.Errorf("case %d: ok %v with %d results, want %v with %d", i, ok, len(results), tt.ok, len(tt.checks))
		}
	}
}

// Issue 11 point 3, seed 001 (the accept gate accepts only checkable,
// specific facts): a file_exists check alone, a three-character quote
// searched in the whole file, a quote far from the cited lines, or a
// refutation without evidence do not pass; a full-line quote at or near the
// cited lines (or, for a refutation, anywhere) does.
func TestAcceptGateWantsSpecificEvidence(t *testing.T) {
	t.Parallel()
	sb, err := newSandbox(sampleRepo(t), 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	const file = "internal/auth/session.go"
	cite := citation{path: file, start: 17, end: 17, window: 3}
	fullLine := Check{Kind: CheckContentContains, Path: file, StartLine: 17, EndLine: 17, Match: "sess.Expires = sess.Expires.Add(ttl)", Required: true}
	tests := []struct {
		name    string
		verdict string
		checks  []Check
		ok      bool
	}{
		{"file_exists alone", review.VerdictConfirmed, []Check{{Kind: CheckFileExists, Path: file, Required: true}}, false},
		{"three characters anywhere", review.VerdictConfirmed, []Check{{Kind: CheckContentContains, Path: file, Match: "ttl", Required: true}}, false},
		{"fragment at the line", review.VerdictConfirmed, []Check{{Kind: CheckContentContains, Path: file, StartLine: 17, Match: "Add(", Required: true}}, false},
		{"full line far away", review.VerdictConfirmed, []Check{{Kind: CheckContentContains, Path: file, StartLine: 10, EndLine: 10, Match: "sess := s.byID[id]", Required: true}}, false},
		{"full line in another file", review.VerdictConfirmed, []Check{{Kind: CheckContentContains, Path: "README.md", StartLine: 1, EndLine: 1, Match: "# sample", Required: true}}, false},
		{"refuted without evidence", review.VerdictRefuted, nil, false},
		{"full line at the cited lines", review.VerdictConfirmed, []Check{fullLine}, true},
		{"full line near the cited lines", review.VerdictConfirmed, []Check{{Kind: CheckContentContains, Path: "./" + file, StartLine: 15, EndLine: 16, Match: "func (s *Store) Touch(id string) { sess := s.Lookup(id)", Required: true}}, true},
		{"refuted by code elsewhere", review.VerdictRefuted, []Check{{Kind: CheckContentContains, Path: file, StartLine: 10, EndLine: 10, Match: "sess := s.byID[id]", Required: true}}, true},
		{"inconclusive needs none", review.VerdictInconclusive, nil, true},
	}
	for _, tt := range tests {
		results, ok := acceptGate(sb, &facts{}, tt.checks, tt.verdict, cite)
		if ok != tt.ok {
			t.Errorf("%s: ok %v, want %v: %+v", tt.name, ok, tt.ok, results)
		}
	}
}
