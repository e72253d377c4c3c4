package prompts

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// FileStat compares, for one file, the intent prompt progressive context
// assembles with the fixed prompt that carries every pack.
type FileStat struct {
	Path      string
	Packs     []Pack
	Fallback  bool // the change carries code but no signal fired, so every pack was used
	NoCode    bool // the change carries no code, so no pack was used (see DetectPacks)
	Lines     int  // lines of the assembled system prompt
	FullLines int  // lines of the full system prompt
	Chars     int  // characters of the assembled system prompt
	FullChars int  // characters of the full system prompt
}

// Stats measures the intent system prompt that progressive context selects
// for a file's diff against the full prompt.
func (s *Set) Stats(path, diffText string) FileStat {
	hits, code := detect(path, diffText)
	packs := packsOf(hits, code)
	p := s.IntentSystem(packs)
	return FileStat{
		Path:      path,
		Packs:     packs,
		Fallback:  code && len(hits) == 0,
		NoCode:    !code,
		Lines:     countLines(p),
		FullLines: countLines(s.full),
		Chars:     utf8.RuneCountInString(p),
		FullChars: utf8.RuneCountInString(s.full),
	}
}

// LineReduction is the fraction of prompt lines saved: 1 - Lines/FullLines.
func (f FileStat) LineReduction() float64 {
	return reduction(f.Lines, f.FullLines)
}

// CharReduction is the fraction of prompt characters saved:
// 1 - Chars/FullChars.
func (f FileStat) CharReduction() float64 {
	return reduction(f.Chars, f.FullChars)
}

func reduction(part, full int) float64 {
	if full == 0 {
		return 0
	}
	return 1 - float64(part)/float64(full)
}

// countLines counts the lines of text; a final newline ends the last line
// rather than starting a new one.
func countLines(text string) int {
	if text == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
}

// seedTarget is the line reduction the design asks progressive context to
// reach on real diffs.
const seedTarget = 0.30

// StatsSummary condenses the statistics of a set of files.
type StatsSummary struct {
	Files    int
	Signals  int // files where a signal fired
	Fallback int // files with code but no signal: every pack
	NoCode   int // files without code: no pack
	// LineReduction and CharReduction are the means over all files.
	LineReduction, CharReduction float64
	// SignalLineReduction and SignalCharReduction are the means over the
	// files where a signal fired (0 when there are none).
	SignalLineReduction, SignalCharReduction float64

	OnTarget  int          // files whose line reduction reaches the 30% target
	PackFiles map[Pack]int // how many files selected each pack
}

// Summarize computes the summary of files.
func Summarize(files []FileStat) StatsSummary {
	sum := StatsSummary{Files: len(files), PackFiles: make(map[Pack]int)}
	for _, f := range files {
		for _, p := range f.Packs {
			sum.PackFiles[p]++
		}
		switch {
		case f.NoCode:
			sum.NoCode++
		case f.Fallback:
			sum.Fallback++
		default:
			sum.Signals++
			sum.SignalLineReduction += f.LineReduction()
			sum.SignalCharReduction += f.CharReduction()
		}
		sum.LineReduction += f.LineReduction()
		sum.CharReduction += f.CharReduction()
		if f.LineReduction() >= seedTarget {
			sum.OnTarget++
		}
	}
	if sum.Files > 0 {
		sum.LineReduction /= float64(sum.Files)
		sum.CharReduction /= float64(sum.Files)
	}
	if sum.Signals > 0 {
		sum.SignalLineReduction /= float64(sum.Signals)
		sum.SignalCharReduction /= float64(sum.Signals)
	}
	return sum
}

// String gives the summary on one line: the files per class and the mean
// reductions over all files.
func (s StatsSummary) String() string {
	return fmt.Sprintf("files %d (signals %d, fallback %d, no code %d); mean reduction: lines %.1f%%, chars %.1f%%",
		s.Files, s.Signals, s.Fallback, s.NoCode, 100*s.LineReduction, 100*s.CharReduction)
}

// WriteStatsTable writes one row per file (path, packs, lines and
// characters against the full prompt, reductions; packs read "all (no
// signal)" for the fallback and "none (no code)" for a change without code)
// and a summary: the files per class, the mean reductions over all files and
// over the files where a signal fired, how many files reach the 30%
// line-reduction target, and how many files selected each pack.
func WriteStatsTable(w io.Writer, files []FileStat) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tPACKS\tLINES\tCHARS\tLINE REDUCTION\tCHAR REDUCTION")
	for _, f := range files {
		packs := make([]string, len(f.Packs))
		for i, p := range f.Packs {
			packs[i] = string(p)
		}
		packList := strings.Join(packs, ",")
		switch {
		case f.NoCode:
			packList = "none (no code)"
		case f.Fallback:
			packList = "all (no signal)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d/%d\t%.1f%%\t%.1f%%\n", f.Path, packList,
			f.Lines, f.FullLines, f.Chars, f.FullChars, 100*f.LineReduction(), 100*f.CharReduction())
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write stats table: %w", err)
	}
	if len(files) == 0 {
		if _, err := fmt.Fprintln(w, "no files"); err != nil {
			return fmt.Errorf("write stats summary: %w", err)
		}
		return nil
	}
	sum := Summarize(files)
	var counts []string
	for _, p := range AllPacks {
		counts = append(counts, fmt.Sprintf("%s %d", p, sum.PackFiles[p]))
	}
	_, err := fmt.Fprintf(w, "\nfiles: %d (signals %d, fallback to all packs %d, no code %d)\n"+
		"mean reduction: lines %.1f%%, chars %.1f%%\nfiles with line reduction >= %.0f%%: %d\nfiles per pack: %s\n",
		sum.Files, sum.Signals, sum.Fallback, sum.NoCode, 100*sum.LineReduction, 100*sum.CharReduction,
		100*seedTarget, sum.OnTarget, strings.Join(counts, ", "))
	if err == nil && sum.Signals > 0 {
		_, err = fmt.Fprintf(w, "mean reduction where a signal fired: lines %.1f%%, chars %.1f%%\n",
			100*sum.SignalLineReduction, 100*sum.SignalCharReduction)
	}
	if err != nil {
		return fmt.Errorf("write stats summary: %w", err)
	}
	return nil
}
