package bulk

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseManifest(t *testing.T) {
	t.Parallel()
	good := `{"repo": "https://git.example/acme/api.git", "base": "main", "head": "feature", "labels": {"team": "core"}, "purpose": "Add a cache"}

# a comment
{"repo": "git@git.example:acme/web.git", "base": "v1.0", "head": "v1.1", "head_repo": "ssh://git@git.example/fork/web.git"}
`
	got, err := ParseManifest(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Line: 1, Repo: "https://git.example/acme/api.git", Base: "main", Head: "feature", Labels: map[string]string{"team": "core"}, Purpose: "Add a cache"},
		{Line: 4, Repo: "git@git.example:acme/web.git", Base: "v1.0", Head: "v1.1", HeadRepo: "ssh://git@git.example/fork/web.git"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestParseManifestReportsEveryMalformedLine(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"repo": "https://git.example/a.git", "base": "main", "head": "x"}`,
		`{"repo": "https://git.example/a.git", "base": "main"`,                                                  // 2: truncated
		`{"repo": "https://git.example/a.git", "head": "x"}`,                                                    // 3: no base
		`{"repo": "https://git.example/a.git", "base": "m", "head": "x", "colour": "red"}`,                      // 4: unknown key
		`{"repo": "https://git.example/a.git", "base": "m", "head": "x"} {"repo": "https://git.example/b.git"}`, // 5: two values
		`["https://git.example/a.git", "main", "x"]`,                                                            // 6: not an object
		`{"repo": "https://git.example/a.git", "base": "m", "head": "x", "labels": {"n": 1}}`,                   // 7: label not a string
		`{"repo": "https://git.example/a.git", "base": "main", "head": "y"}`,
	}, "\n")
	entries, err := ParseManifest(strings.NewReader(in))
	var me *ManifestError
	if !errors.As(err, &me) {
		t.Fatalf("want a ManifestError, got %v (entries %v)", err, entries)
	}
	if entries != nil {
		t.Fatalf("entries returned with malformed lines: %v", entries)
	}
	var lines []int
	for _, l := range me.Lines {
		lines = append(lines, l.Line)
	}
	if !reflect.DeepEqual(lines, []int{2, 3, 4, 5, 6, 7}) {
		t.Fatalf("malformed lines %v, want 2-7\n%v", lines, err)
	}
	if !strings.Contains(me.Lines[1].Msg, "missing base") || !strings.Contains(err.Error(), "line 4:") ||
		!strings.Contains(err.Error(), "nothing was submitted") {
		t.Fatalf("unhelpful message:\n%v", err)
	}
}

// A manifest line is written by whoever prepares the batch: it may name
// remote repositories only, never a directory or file:// URL on the
// worker (another review's cached clone, the fleet's own checkout).
func TestParseManifestRefusesLocalRepositories(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line, want string // want "" = accepted
	}{
		{`"repo": "/abs/path"`, "line 1: repo: a local path is not accepted from a manifest; use a remote URL"},
		{`"repo": "./rel"`, "line 1: repo: a local path is not accepted from a manifest"},
		{`"repo": "rel"`, "line 1: repo: a local path is not accepted from a manifest"},
		{`"repo": "/tmp/a@b:c"`, "line 1: repo: a local path is not accepted"},
		{`"repo": "file:///x"`, "line 1: repo: a file:// URL is not accepted from a manifest"},
		{`"repo": "FILE:///x"`, "line 1: repo: a file:// URL is not accepted from a manifest"},
		{`"repo": "file://localhost/srv/cache/repos/0a1b"`, "line 1: repo: a file:// URL is not accepted"},
		{`"repo": "ext::sh -c id"`, `line 1: repo: "ext::sh -c id": transport "ext" is not accepted`},
		{`"repo": "git://git.example/a.git"`, `line 1: repo: transport "git" is not accepted`},
		{`"repo": "http://git.example/a.git"`, "line 1: repo: plain http is not accepted from a manifest; use https"},
		{`"repo": "https://git.example/a.git", "head_repo": "/srv/cache/repos/0a1b"`, "line 1: head_repo: a local path is not accepted"},
		{`"repo": "https://git.example/a.git", "head_repo": "file:///srv/cache/repos/0a1b"`, "line 1: head_repo: a file:// URL is not accepted"},
		{`"repo": "git@git.example:acme/api.git"`, ""},
		{`"repo": "https://git.example/acme/api.git"`, ""},
		{`"repo": "ssh://git@git.example/acme/api.git"`, ""},
		{`"repo": "https://git.example/a.git", "head_repo": "https://git.example/fork/a.git"`, ""},
		// Checked against snapshot.allow_loopback_http when prepared.
		{`"repo": "http://127.0.0.1:3000/acme/api.git"`, ""},
	} {
		_, err := ParseManifest(strings.NewReader(`{` + tc.line + `, "base": "main", "head": "next"}`))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.line, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want it to say %q", tc.line, err, tc.want)
		}
	}
}

func TestParseManifestEmpty(t *testing.T) {
	t.Parallel()
	if _, err := ParseManifest(strings.NewReader("\n# nothing\n")); err == nil {
		t.Fatal("an empty manifest was accepted")
	}
}
