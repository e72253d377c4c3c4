package agent

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no run leaves goroutines behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
