package agent

import "testing"

func TestRepeatDetector(t *testing.T) {
	t.Parallel()
	type obs struct{ sig, result string }
	a, b := obs{"grep x", "r1"}, obs{"grep y", "r1"}
	aNew := obs{"grep x", "r2"}
	tests := []struct {
		name       string
		seq        []obs
		remindAt   int // 1-based index of the reminder, 0 for none
		stopAt     int
		finalCount int
	}{
		{"three identical remind, the fourth stops", []obs{a, a, a, a}, 3, 4, 4},
		{"another call resets", []obs{a, a, b, a, a}, 0, 0, 2},
		{"a new result resets", []obs{a, a, aNew, aNew, aNew}, 5, 0, 3},
		{"distinct calls never count", []obs{a, b, a, b, a, b}, 0, 0, 1},
	}
	for _, tt := range tests {
		d := repeatDetector{threshold: 3}
		remindAt, stopAt := 0, 0
		for i, o := range tt.seq {
			remind, stop := d.observe(o.sig, o.result)
			if remind && remindAt == 0 {
				remindAt = i + 1
			}
			if stop && stopAt == 0 {
				stopAt = i + 1
			}
		}
		if remindAt != tt.remindAt || stopAt != tt.stopAt || d.streak != tt.finalCount {
			t.Errorf("%s: remind at %d, stop at %d, streak %d; want %d, %d, %d",
				tt.name, remindAt, stopAt, d.streak, tt.remindAt, tt.stopAt, tt.finalCount)
		}
	}
}
