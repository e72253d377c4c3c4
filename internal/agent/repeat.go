package agent

import (
	"crypto/sha256"
	"encoding/hex"
)

// repeatDetector spots a model stuck in a loop: the same call signature
// (tool and canonical arguments) returning the same result fingerprint
// several times in a row. Any other call or any new result resets it, so
// ordinary reading and searching never count against the model.
type repeatDetector struct {
	threshold   int
	signature   string
	fingerprint string
	streak      int
}

// observe records one call and its result. remind is true when the streak
// reaches the threshold, stop when it goes past it.
func (d *repeatDetector) observe(signature, result string) (remind, stop bool) {
	sum := sha256.Sum256([]byte(result))
	fp := hex.EncodeToString(sum[:])
	if d.streak > 0 && signature == d.signature && fp == d.fingerprint {
		d.streak++
	} else {
		d.signature, d.fingerprint, d.streak = signature, fp, 1
	}
	return d.streak == d.threshold, d.streak > d.threshold
}
