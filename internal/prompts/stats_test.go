package prompts

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStats(t *testing.T) {
	t.Parallel()
	s := mustLoad(t)
	st := s.Stats("a.go", hunkOf(`+	go work()`, `+	if x == nil {`))
	full := s.IntentSystemFull()
	if st.FullLines != strings.Count(full, "\n") || st.FullChars != utf8.RuneCountInString(full) {
		t.Errorf("full size %d lines/%d chars, prompt has %d/%d", st.FullLines, st.FullChars, strings.Count(full, "\n"), utf8.RuneCountInString(full))
	}
	assembled := s.IntentSystem(st.Packs)
	if st.Lines != strings.Count(assembled, "\n") || st.Chars != utf8.RuneCountInString(assembled) {
		t.Errorf("stat %d/%d does not measure the assembled prompt %d/%d", st.Lines, st.Chars, strings.Count(assembled, "\n"), utf8.RuneCountInString(assembled))
	}
	if want := 1 - float64(st.Lines)/float64(st.FullLines); st.LineReduction() != want {
		t.Errorf("LineReduction = %v, want %v", st.LineReduction(), want)
	}
	if (FileStat{}).LineReduction() != 0 || (FileStat{}).CharReduction() != 0 {
		t.Error("reduction of an empty stat should be 0")
	}
	if full := s.Stats("site.css", hunkOf(`+a { color: red; }`)); full.LineReduction() != 0 || !full.Fallback {
		t.Errorf("a file without signal: reduction %v, fallback %v", full.LineReduction(), full.Fallback)
	}
	if st.Fallback || st.NoCode {
		t.Errorf("a file with signals marked as fallback %v or without code %v", st.Fallback, st.NoCode)
	}
	core := s.IntentSystem(nil)
	for _, path := range []string{"go.mod", "a.go"} {
		nc := s.Stats(path, hunkOf(`+// require example.com/x v1.2.0`, `+`))
		if !nc.NoCode || nc.Fallback || len(nc.Packs) != 0 {
			t.Errorf("%s without code: no code %v, fallback %v, packs %v", path, nc.NoCode, nc.Fallback, nc.Packs)
		}
		if nc.Lines != strings.Count(core, "\n") || nc.Chars != utf8.RuneCountInString(core) {
			t.Errorf("%s without code measures %d/%d, the core prompt has %d/%d", path, nc.Lines, nc.Chars, strings.Count(core, "\n"), utf8.RuneCountInString(core))
		}
		if nc.LineReduction() <= st.LineReduction() {
			t.Errorf("%s: the core alone saves %.2f, no more than one pack's %.2f", path, nc.LineReduction(), st.LineReduction())
		}
	}
}

func TestWriteStatsTable(t *testing.T) {
	t.Parallel()
	files := []FileStat{
		{Path: "a.go", Packs: []Pack{PackConcurrency}, Lines: 50, FullLines: 100, Chars: 400, FullChars: 1000},
		{Path: "b.js", Packs: []Pack{PackConcurrency, PackRobustness}, Lines: 80, FullLines: 100, Chars: 800, FullChars: 1000},
		{Path: "c.go", Packs: AllPacks, Fallback: true, Lines: 100, FullLines: 100, Chars: 1000, FullChars: 1000},
		{Path: "d.md", NoCode: true, Lines: 40, FullLines: 100, Chars: 300, FullChars: 1000},
	}
	var buf bytes.Buffer
	if err := WriteStatsTable(&buf, files); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"a.go", "concurrency,robustness", "50/100", "400/1000", "50.0%", "60.0%", "20.0%", "c.go  all (no signal)",
		"d.md  none (no code)", "files: 4 (signals 2, fallback to all packs 1, no code 1)\n",
		"mean reduction: lines 32.5%, chars 37.5%\n",
		"mean reduction where a signal fired: lines 35.0%, chars 40.0%\n", "files with line reduction >= 30%: 2\n",
		"files per pack: authorization 1, concurrency 3, intent 1, lifecycle 1, memory_safety 1, resource_leak 1, robustness 2\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := WriteStatsTable(&buf, nil); err != nil || !strings.Contains(buf.String(), "no files") {
		t.Errorf("empty table: %v %q", err, buf.String())
	}
	if err := WriteStatsTable(failingWriter{}, files); err == nil {
		t.Error("write error not reported")
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	files := []FileStat{
		{Packs: []Pack{PackIntent}, Lines: 60, FullLines: 100, Chars: 500, FullChars: 1000},
		{Packs: AllPacks, Fallback: true, Lines: 100, FullLines: 100, Chars: 1000, FullChars: 1000},
		{NoCode: true, Lines: 40, FullLines: 100, Chars: 300, FullChars: 1000},
		{NoCode: true, Lines: 40, FullLines: 100, Chars: 300, FullChars: 1000},
	}
	got := Summarize(files)
	if got.Files != 4 || got.Signals != 1 || got.Fallback != 1 || got.NoCode != 2 || got.OnTarget != 3 {
		t.Errorf("classes %+v, want 4 files: 1 signals, 1 fallback, 2 no code, 3 on target", got)
	}
	if want := (0.4 + 0 + 0.6 + 0.6) / 4; math.Abs(got.LineReduction-want) > 1e-9 {
		t.Errorf("mean line reduction %v, want %v", got.LineReduction, want)
	}
	if want := (0.5 + 0 + 0.7 + 0.7) / 4; math.Abs(got.CharReduction-want) > 1e-9 {
		t.Errorf("mean char reduction %v, want %v", got.CharReduction, want)
	}
	if got.PackFiles[PackIntent] != 2 || got.PackFiles[PackLifecycle] != 1 {
		t.Errorf("files per pack %v", got.PackFiles)
	}
	if want := "files 4 (signals 1, fallback 1, no code 2); mean reduction: lines 40.0%, chars 47.5%"; got.String() != want {
		t.Errorf("String() = %q, want %q", got.String(), want)
	}
	if empty := Summarize(nil); empty.Files != 0 || empty.LineReduction != 0 || empty.SignalLineReduction != 0 {
		t.Errorf("empty summary %+v", empty)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
