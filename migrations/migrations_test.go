package migrations

import (
	"io/fs"
	"regexp"
	"slices"
	"testing"
)

// released lists, in order, the migration files deployed databases may
// already hold. Add a file here once it is released; from then on it may
// not change its name, and every new file must be numbered above it.
var released = []string{
	"00001_init.sql",
	"00002_outcomes.sql",
	"00003_fleet_recovery.sql",
	"00004_bulk.sql",
	"00005_snapshot_fallback.sql",
	"00008_finding_quote_fix.sql",
	"00009_throughput.sql",
	"00010_eval_runs.sql",
	"00011_llm_messages.sql",
	"00012_history_views.sql",
	"00013_github.sql",
	"00014_incremental.sql",
	"00015_expert_tool_calls.sql",
	"00016_webhook_replay.sql",
	"00017_claims.sql",
	"00018_feedback.sql",
	"00019_console.sql",
}

var migrationName = regexp.MustCompile(`^(\d{5})_[a-z0-9_]+\.sql$`)

// TestNewMigrationsSortLast refuses a migration numbered at or below the
// newest released one (goose would refuse to apply it to a database
// already past that number) and a released migration renamed or removed.
func TestNewMigrationsSortLast(t *testing.T) {
	files, err := fs.Glob(FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if problems := checkNumbering(files, released); len(problems) > 0 {
		for _, p := range problems {
			t.Error(p)
		}
	}
}

// checkNumbering returns what is wrong with files given the released ones.
func checkNumbering(files, released []string) []string {
	var problems []string
	for i := 1; i < len(released); i++ {
		if released[i] <= released[i-1] {
			problems = append(problems, "released list out of order at "+released[i])
		}
	}
	seen := map[string]string{}
	for _, f := range files {
		m := migrationName.FindStringSubmatch(f)
		if m == nil {
			problems = append(problems, f+": want NNNNN_lower_snake_name.sql")
			continue
		}
		if other, ok := seen[m[1]]; ok {
			problems = append(problems, f+": number taken by "+other)
		}
		seen[m[1]] = f
	}
	for _, r := range released {
		if !slices.Contains(files, r) {
			problems = append(problems, r+": released migration renamed or removed")
		}
	}
	if len(released) == 0 {
		return problems
	}
	newest := released[len(released)-1]
	for _, f := range files {
		if slices.Contains(released, f) {
			continue
		}
		if f[:5] <= newest[:5] {
			problems = append(problems, f+": numbered at or below the newest released migration "+newest+"; take the next number above it")
		}
	}
	return problems
}

func TestCheckNumberingRefuses(t *testing.T) {
	rel := []string{"00001_a.sql", "00004_b.sql"}
	tests := []struct {
		name  string
		files []string
		bad   int
	}{
		{"released only", []string{"00001_a.sql", "00004_b.sql"}, 0},
		{"new above", []string{"00001_a.sql", "00004_b.sql", "00005_c.sql"}, 0},
		{"fills a gap", []string{"00001_a.sql", "00002_c.sql", "00004_b.sql"}, 1},
		{"same number as released", []string{"00001_a.sql", "00004_b.sql", "00004_c.sql"}, 2},
		{"released renamed", []string{"00001_a.sql", "00004_bb.sql"}, 2},
		{"bad name", []string{"00001_a.sql", "00004_b.sql", "6_c.sql"}, 1},
	}
	for _, tt := range tests {
		if got := checkNumbering(tt.files, rel); len(got) != tt.bad {
			t.Errorf("%s: problems %q, want %d", tt.name, got, tt.bad)
		}
	}
	if got := checkNumbering(nil, []string{"00004_b.sql", "00001_a.sql"}); len(got) == 0 {
		t.Error("an unordered released list passed")
	}
}
