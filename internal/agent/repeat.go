package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// maxCyclePeriod is the longest loop the detector looks for, in rounds.
const maxCyclePeriod = 3

// repeatDetector spots a model stuck in a loop across rounds (seed 001:
// the same tool signature with the same result fingerprint; remind first,
// stop when it goes on). A round is summed up by the signatures and result
// fingerprints of all its calls, so parallel calls inside one round never
// count. A loop is a block of 1 to 3 rounds repeated: A/A/A, A/B/A/B,
// A/B/C/A/B/C. Any new call or new result breaks it, so ordinary reading
// and searching never count against the model.
type repeatDetector struct {
	// threshold is the shortest run of rounds that makes a loop of one
	// round (A/A/A with 3); longer loops need two full repetitions.
	threshold int
	history   []string
	reminded  bool
}

// call is one tool call of a round: its signature and its result.
type call struct{ signature, result string }

// observeRound records one round's calls. remind is true when a loop is
// first seen, stop when the round after the reminder goes on with it;
// period is the loop's length in rounds.
func (d *repeatDetector) observeRound(calls []call) (remind, stop bool, period int) {
	keys := make([]string, len(calls))
	for i, c := range calls {
		sum := sha256.Sum256([]byte(c.result))
		keys[i] = c.signature + "\x00" + hex.EncodeToString(sum[:8])
	}
	slices.Sort(keys)
	d.history = append(d.history, strings.Join(keys, "\x01"))
	if len(d.history) > 4*maxCyclePeriod*max(d.threshold, 2) {
		d.history = d.history[1:]
	}
	period = d.loop()
	switch {
	case period == 0:
		d.reminded = false
		return false, false, 0
	case d.reminded:
		return false, true, period
	}
	d.reminded = true
	return true, false, period
}

// loop returns the period of the loop the latest rounds form, 0 for none.
func (d *repeatDetector) loop() int {
	h := d.history
	for p := 1; p <= maxCyclePeriod; p++ {
		same := 0 // trailing rounds equal to the round p before them
		for i := len(h) - 1; i-p >= 0 && h[i] == h[i-p]; i-- {
			same++
		}
		if same >= p && same+p >= d.threshold {
			return p
		}
	}
	return 0
}
