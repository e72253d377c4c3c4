package redact

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata/secrets")

// redactFile redacts a corpus file as the review does: diffs as diffs.
func redactFile(r *Redactor, name, text string) string {
	if strings.HasSuffix(name, ".diff") {
		return r.Diff(text)
	}
	return r.Text(text)
}

func secretValues(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("testdata/secrets/values.txt")
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			vals = append(vals, l)
		}
	}
	return vals
}

// TestCorpusSecrets redacts every file of testdata/secrets: the output
// matches its golden file, no listed secret value survives, and the line
// count is unchanged.
func TestCorpusSecrets(t *testing.T) {
	vals := secretValues(t)
	files, _ := filepath.Glob("testdata/secrets/*")
	all := New()
	var joined strings.Builder
	for _, path := range files {
		name := filepath.Base(path)
		if name == "values.txt" || strings.HasSuffix(name, ".golden") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			in := string(data)
			out := redactFile(New(), name, in)
			joined.WriteString(redactFile(all, name, in))
			if got, want := strings.Count(out, "\n"), strings.Count(in, "\n"); got != want {
				t.Errorf("%d lines after redaction, %d before", got, want)
			}
			if !strings.Contains(out, "[REDACTED:") {
				t.Errorf("nothing redacted:\n%s", out)
			}
			golden := path + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if out != string(want) {
				t.Errorf("redacted text differs from %s:\n%s", golden, out)
			}
		})
	}
	for _, v := range vals {
		if strings.Contains(joined.String(), v) {
			t.Errorf("secret %q survived redaction", v)
		}
	}
}

// TestCorpusClean checks that ordinary code, hashes, UUIDs, placeholders
// and prose are left alone.
func TestCorpusClean(t *testing.T) {
	files, _ := filepath.Glob("testdata/clean/*")
	if len(files) == 0 {
		t.Fatal("no clean corpus")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			in := string(data)
			if out := String(in); out != in {
				t.Errorf("clean text was changed:\n%s", out)
			}
		})
	}
}

// What is found on a line is cached; a text redacted again, its lines all
// cached, comes out exactly as it did the first time, the corpus's golden
// files included.
func TestCachedLinesRedactAlike(t *testing.T) {
	scanCache.reset()
	ruleCache.reset()
	headCache.reset()
	files, err := filepath.Glob(filepath.Join("testdata", "secrets", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("corpus: %v %v", files, err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, ".golden") {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		cold := redactFile(New(), name, string(data))
		warm := redactFile(New(), name, string(data))
		if warm != cold {
			t.Errorf("%s: redacted with cached lines differs from the first time", name)
		}
		if cold == string(data) {
			t.Errorf("%s: nothing redacted", name)
		}
	}
}

// A text of many long, distinct lines does not grow a line cache past its
// byte bound.
func TestLineCacheBoundsItsBytes(t *testing.T) {
	var c lineCache[bool]
	line := strings.Repeat("x", maxCachedLine-10)
	for i := range 2 * maxCachedBytes / len(line) {
		c.get(line+strconv.Itoa(i), func(string) bool { return true })
		if c.bytes > maxCachedBytes {
			t.Fatalf("after %d lines the cache holds %d bytes, bound %d", i+1, c.bytes, maxCachedBytes)
		}
	}
	if len(c.m) == 0 {
		t.Fatal("nothing cached")
	}
}
