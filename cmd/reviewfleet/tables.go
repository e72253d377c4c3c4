package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/reviewfleet/reviewfleet/internal/untrusted"
)

// table is rows of cells written as a terminal table, CSV or Markdown.
// Cells may hold text from a manifest or a repository (names, refs,
// errors): each writer makes it inert for its reader.
type table struct {
	header []string
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// writeText aligns the table in columns for a terminal; control
// characters (escape sequences, tabs, newlines) are written as escapes.
func (t *table) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range append([][]string{t.header}, t.rows...) {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = untrusted.OneLine(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// writeCSV writes the table as CSV. A cell a spreadsheet would take for a
// formula (=, +, -, @ first) is prefixed with a quote.
func (t *table) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.header); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, r := range t.rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = csvCell(c)
		}
		if err := cw.Write(cells); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// writeMarkdown writes the table as a Markdown (GitHub) table.
func (t *table) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + mdCell(c) + " |")
		}
		b.WriteString("\n")
	}
	row(t.header)
	b.WriteString("|" + strings.Repeat(" --- |", len(t.header)) + "\n")
	for _, r := range t.rows {
		row(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell makes text one inert Markdown table cell: on one line, with the
// characters Markdown or HTML would act on escaped.
func mdCell(s string) string {
	s = untrusted.OneLine(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '|', '`', '*', '_', '[', ']', '<', '>', '#', '!', '~', '&':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// labelText writes labels as sorted key=value pairs.
func labelText(labels map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

// checkTableFormat accepts the formats of a listing command.
func checkTableFormat(format string, allowed ...string) error {
	if slices.Contains(allowed, format) {
		return nil
	}
	return exitError{code: exitUsage, err: fmt.Errorf("unknown --format %q (%s)", format, strings.Join(allowed, ", "))}
}
