package agent

import "testing"

// The repeat-cycle detector: remind first, stop
// when the loop goes on; loops of 1 to 3 rounds across rounds; parallel
// calls inside one round never count.
func TestRepeatDetector(t *testing.T) {
	t.Parallel()
	a, b, c := call{"grep x", "r1"}, call{"grep y", "r1"}, call{"read z", "r3"}
	aNew := call{"grep x", "r2"}
	r := func(cs ...call) []call { return cs }
	tests := []struct {
		name     string
		rounds   [][]call
		remindAt int // 1-based round of the reminder, 0 for none
		stopAt   int
	}{
		{"A/A/A reminds, a fourth A stops", [][]call{r(a), r(a), r(a), r(a)}, 3, 4},
		{"another call resets", [][]call{r(a), r(a), r(b), r(a), r(a)}, 0, 0},
		{"a new result resets", [][]call{r(a), r(a), r(aNew), r(aNew), r(aNew)}, 5, 0},
		{"four identical parallel calls in one round", [][]call{r(a, a, a, a)}, 0, 0},
		{"A/B/A/B reminds, going on stops", [][]call{r(a), r(b), r(a), r(b), r(a)}, 4, 5},
		{"A/B/C/A/B/C reminds, going on stops", [][]call{r(a), r(b), r(c), r(a), r(b), r(c), r(a)}, 6, 7},
		{"breaking the loop after the reminder resets it", [][]call{r(a), r(a), r(a), r(c), r(a), r(a), r(a)}, 3, 0},
		{"distinct rounds never count", [][]call{r(a), r(b), r(c), r(aNew), r(a, b)}, 0, 0},
	}
	for _, tt := range tests {
		d := repeatDetector{threshold: 3}
		remindAt, stopAt := 0, 0
		for i, round := range tt.rounds {
			remind, stop, _ := d.observeRound(round)
			if remind && remindAt == 0 {
				remindAt = i + 1
			}
			if stop && stopAt == 0 {
				stopAt = i + 1
			}
		}
		if remindAt != tt.remindAt || stopAt != tt.stopAt {
			t.Errorf("%s: remind at %d, stop at %d; want %d, %d", tt.name, remindAt, stopAt, tt.remindAt, tt.stopAt)
		}
	}
}
