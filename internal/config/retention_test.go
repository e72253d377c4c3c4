package config

import (
	"testing"
	"time"
)

func TestParseAge(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"90d", 90 * 24 * time.Hour},
		{"12h", 12 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{" 7d ", 7 * 24 * time.Hour},
		{"30m", 30 * time.Minute},
	} {
		if got, err := ParseAge(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "0d", "-1d", "d", "90", "90 days", "1.5d", "12x", "-3h"} {
		if got, err := ParseAge(bad); err == nil {
			t.Errorf("ParseAge(%q) = %v, want an error", bad, got)
		}
	}
}

func TestRetentionDefaultsAreValid(t *testing.T) {
	c := Default()
	if c.Retention.OlderThan != "90d" || c.Retention.BatchSize != 1000 || c.Retention.KeepVerdicts {
		t.Errorf("retention defaults: %+v", c.Retention)
	}
	c.Retention.OlderThan = "ninety days"
	if err := c.Validate(); err == nil {
		t.Error("a bad retention.older_than passed validation")
	}
}
