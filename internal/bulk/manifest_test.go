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
{"repo": "/src/web", "base": "v1.0", "head": "v1.1"}
`
	got, err := ParseManifest(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Line: 1, Repo: "https://git.example/acme/api.git", Base: "main", Head: "feature", Labels: map[string]string{"team": "core"}, Purpose: "Add a cache"},
		{Line: 4, Repo: "/src/web", Base: "v1.0", Head: "v1.1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestParseManifestReportsEveryMalformedLine(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"repo": "/a", "base": "main", "head": "x"}`,
		`{"repo": "/a", "base": "main"`,                                // 2: truncated
		`{"repo": "/a", "head": "x"}`,                                  // 3: no base
		`{"repo": "/a", "base": "m", "head": "x", "colour": "red"}`,    // 4: unknown key
		`{"repo": "/a", "base": "m", "head": "x"} {"repo": "/b"}`,      // 5: two values
		`["/a", "main", "x"]`,                                          // 6: not an object
		`{"repo": "/a", "base": "m", "head": "x", "labels": {"n": 1}}`, // 7: label not a string
		`{"repo": "/a", "base": "main", "head": "y"}`,
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

func TestParseManifestEmpty(t *testing.T) {
	t.Parallel()
	if _, err := ParseManifest(strings.NewReader("\n# nothing\n")); err == nil {
		t.Fatal("an empty manifest was accepted")
	}
}
