package demo

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/reviewfleet/reviewfleet/internal/replay"
)

// RepoName is the repository name the demo review shows and its prompts
// quote, in place of the temporary directory the sample is written to.
const RepoName = "reviewfleet-demo/shop"

// recording is the demo review as recorded against the rule-based
// exchange (Handler) with `recording export`. Regenerate it with
// REVIEWFLEET_UPDATE_DEMO=1 go test ./cmd/reviewfleet -run TestDemoRecording.
//
//go:embed recording.json
var recording []byte

// Recording returns the bundled recording the demo plays back.
func Recording() (replay.Recording, error) {
	rec, err := replay.Read(bytes.NewReader(recording))
	if err != nil {
		return rec, fmt.Errorf("the bundled demo recording: %w", err)
	}
	return rec, nil
}
