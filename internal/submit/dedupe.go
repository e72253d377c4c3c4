package submit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// DedupeKey identifies what a review would review and how: the
// repository, both commits (or, for a diff file, the diff itself), the
// configuration snapshot (models and every setting) and the prompts
// (promptsDigest, see PromptsDigest). Two reviews with the same key would
// give the same answer.
func DedupeKey(nr review.NewReview, promptsDigest string) string {
	h := sha256.New()
	fmt.Fprintf(h, "repo %s\nbase %s\nhead %s\nsource %s\n", StripCredentials(nr.Repo), nr.BaseSHA, nr.HeadSHA, nr.Source)
	h.Write(reviewSettings(nr.Config))
	if nr.BaseSHA == "" || nr.HeadSHA == "" {
		for _, f := range nr.Files {
			fmt.Fprintf(h, "\nfile %s\n", f.Path)
			_, _ = io.WriteString(h, f.Diff)
		}
	}
	_, _ = io.WriteString(h, promptsDigest)
	return hex.EncodeToString(h.Sum(nil))
}

// reviewSettings is the part of a configuration snapshot that shapes a
// review's answer: fleet, queue and schedule settings do not.
func reviewSettings(snapshot []byte) []byte {
	var cfg config.Config
	if err := json.Unmarshal(snapshot, &cfg); err != nil {
		return snapshot
	}
	cfg.Worker, cfg.Scheduler, cfg.Telemetry = config.Worker{}, config.Scheduler{}, config.Telemetry{}
	cfg.Fleet, cfg.Bulk, cfg.GitHub, cfg.Webhook = config.Fleet{}, config.Bulk{}, config.GitHub{}, config.Webhook{}
	b, err := json.Marshal(cfg)
	if err != nil {
		return snapshot
	}
	return b
}

// Prompts is a prompt set by file; *prompts.Set provides it.
type Prompts interface {
	Names() []string
	File(name string) (string, bool)
}

// PromptsDigest is a digest of every prompt file of p ("" without a
// prompt set): reviews run with different prompts never share a key.
func PromptsDigest(p Prompts) string {
	if p == nil {
		return ""
	}
	h := sha256.New()
	for _, name := range p.Names() {
		text, _ := p.File(name)
		fmt.Fprintf(h, "%s %d\n%s", name, len(text), text)
	}
	return hex.EncodeToString(h.Sum(nil))
}
