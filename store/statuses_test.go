package store_test

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// checkedValues returns the values a CHECK (column IN (...)) constraint on
// table.column allows, sorted.
func checkedValues(t *testing.T, table, column string) []string {
	t.Helper()
	_, conn := migratedWithConn(t)
	var def string
	err := conn.QueryRow(context.Background(), `
		SELECT pg_get_constraintdef(c.oid)
		FROM pg_constraint c
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
		WHERE c.contype = 'c' AND c.connamespace = current_schema()::regnamespace
		  AND c.conrelid::regclass::text = $1 AND a.attname = $2 AND cardinality(c.conkey) = 1`,
		table, column).Scan(&def)
	if err != nil {
		t.Fatalf("check constraint of %s.%s: %v", table, column, err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`'([^']*)'`).FindAllStringSubmatch(def, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	if len(out) == 0 {
		t.Fatalf("no values in %s.%s's constraint %q", table, column, def)
	}
	return out
}

func sortedStrings[S ~string](v []S) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = string(s)
	}
	slices.Sort(out)
	return out
}

// The domain's statuses are the values the schema accepts: a status the
// schema refuses would fail only when a review reaches it.
func TestStatusesMatchSchema(t *testing.T) {
	t.Parallel()
	if got, want := checkedValues(t, "reviews", "status"), sortedStrings(review.ReviewStatuses); !slices.Equal(got, want) {
		t.Errorf("reviews.status allows %v; review.ReviewStatuses are %v", got, want)
	}
	if got, want := checkedValues(t, "stage_items", "status"), sortedStrings(review.ItemStatuses); !slices.Equal(got, want) {
		t.Errorf("stage_items.status allows %v; review.ItemStatuses are %v", got, want)
	}
}
