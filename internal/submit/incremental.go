package submit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// History reads the earlier reviews an incremental review builds on;
// *store.Store provides it.
type History interface {
	// PreviousReview is the newest finished review of a change line (a
	// pull request) of repo, or "" when there is none.
	PreviousReview(ctx context.Context, repo, changeKey string) (string, error)
	GetReview(ctx context.Context, id string) (review.Review, error)
	// FileResultKeys maps each reviewed file of a review to its result key.
	FileResultKeys(ctx context.Context, reviewID string) (map[string]string, error)
}

// Incremental keys every reviewed file of nr and, when the request names
// an earlier review (or the change line has one), leaves the files whose
// key did not change out of the intent plan: their findings are carried
// from the earlier review instead. promptsDigest is PromptsDigest of the
// prompt set the review runs with.
//
// An earlier review is only built on when it finished complete: a file
// whose item failed there has no findings worth carrying.
func Incremental(ctx context.Context, h History, cfg config.Config, req Request, nr *review.NewReview, promptsDigest string) error {
	settings := reviewSettings(nr.Config)
	nr.Incremental = review.Incremental{ChangeKey: req.ChangeKey, FileKeys: map[string]string{}}
	for _, f := range nr.Files {
		if f.SkipReason == "" {
			nr.Incremental.FileKeys[f.Path] = FileKey(f, promptsDigest, settings)
		}
	}
	since := req.Since
	if since == "" && req.ChangeKey != "" {
		prev, err := h.PreviousReview(ctx, nr.Repo, req.ChangeKey)
		if err != nil {
			return err
		}
		since = prev
	}
	if since == "" {
		return nil
	}
	prev, err := h.GetReview(ctx, since)
	if err != nil {
		return fmt.Errorf("load the review to build on (--since): %w", err)
	}
	if StripCredentials(prev.Repo) != StripCredentials(nr.Repo) {
		return fmt.Errorf("review %s is of %s, not of %s: it cannot be built on", since, StripCredentials(prev.Repo), StripCredentials(nr.Repo))
	}
	if prev.Status != review.ReviewDone || prev.Incomplete {
		return fmt.Errorf("review %s cannot be built on: it is %s%s, not done and complete", since, prev.Status,
			map[bool]string{true: " (incomplete)"}[prev.Incomplete])
	}
	keys, err := h.FileResultKeys(ctx, since)
	if err != nil {
		return err
	}
	nr.Incremental.Since = since
	skip := map[string]bool{}
	for path, key := range nr.Incremental.FileKeys {
		if keys[path] == key {
			skip[path] = true
			nr.Incremental.Carried = append(nr.Incremental.Carried, path)
		}
	}
	nr.IntentMode, nr.Items = Plan(cfg.Intent, nr.Files, skip)
	if len(nr.Items) == 0 && nr.IntentMode == "" {
		nr.IntentMode = prev.IntentMode
	}
	return nil
}

// FileKey is the result key of one file of a review: two reviews give the
// file the same findings when its head content, its diff, the prompt set
// (PromptsDigest), the settings that shape a review (models included) and
// the repository configuration's rules for the file are the same.
func FileKey(f review.File, promptsDigest string, settings []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "path %s\nold %s\nchange %s\n", f.Path, f.OldPath, f.Change)
	content := "<none>"
	if f.Content != nil {
		content = *f.Content
	}
	rules, _ := json.Marshal(f.Rules) // the repository's instructions and rules for the file
	for _, part := range []string{content, f.Diff, promptsDigest, string(settings), string(rules)} {
		fmt.Fprintf(h, "%d\n", len(part))
		_, _ = io.WriteString(h, part)
	}
	return hex.EncodeToString(h.Sum(nil))
}
