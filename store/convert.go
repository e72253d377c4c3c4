package store

import (
	"encoding/json"
	"math"
	"time"
)

// Conversions between the domain's values and the generated queries'
// column types: "" and the zero time are the domain's "none", NULL the
// schema's.

// nonEmpty maps "" (none) onto NULL.
func nonEmpty(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// orEmpty maps NULL onto "".
func orEmpty(v *string) string {
	if v == nil {
		return ""
	}
	return *v
}

// nonZero maps the zero time (unknown) onto NULL.
func nonZero(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// orZero maps NULL onto the zero time.
func orZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// orJSON is m, or def when m is empty: the JSON columns hold no NULLs.
func orJSON(m json.RawMessage, def string) json.RawMessage {
	if len(m) == 0 {
		return json.RawMessage(def)
	}
	return m
}

// i32 bounds a count, line or duration for an integer column.
func i32[T int | int64](n T) int32 {
	return int32(max(min(n, math.MaxInt32), math.MinInt32))
}

// int32s converts line numbers for integer[] columns; a nil slice becomes
// an empty array, the columns' "none".
func int32s(v []int) []int32 {
	out := make([]int32, len(v))
	for i, n := range v {
		out[i] = i32(n)
	}
	return out
}

func ints(v []int32) []int {
	out := make([]int, len(v))
	for i, n := range v {
		out[i] = int(n)
	}
	return out
}

func nonNilStrings(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
