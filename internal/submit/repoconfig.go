package submit

import (
	"fmt"
	"path"

	"github.com/reviewfleet/reviewfleet/internal/repoconfig"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// ReasonRepoIgnored is the skip reason of a file a .reviewfleet.yaml of the
// repository ignores.
const ReasonRepoIgnored = "ignored_by_repo_config"

// applyRepoConfig reads the repository's .reviewfleet.yaml files through
// read (at the base of a commit range, fromBase: see prepare), sets
// aside the files they ignore, gives every reviewed file its rules, and
// records the invalid configuration files as warnings. A configuration
// that cannot be read at all is a warning too: the review goes on with the
// defaults.
func applyRepoConfig(nr *review.NewReview, read readFiles, fromBase bool) {
	if read == nil {
		return
	}
	paths := make([]string, 0, len(nr.Files))
	for _, f := range nr.Files {
		paths = append(paths, f.Path)
	}
	blobs, err := read(repoconfig.Paths(paths), repoconfig.MaxFileBytes+1)
	if err != nil {
		nr.ConfigWarnings = append(nr.ConfigWarnings, review.ConfigWarning{File: repoconfig.FileName,
			Message: fmt.Sprintf("could not read the repository configuration: %v", err)})
		return
	}
	files := map[string][]byte{}
	for name, b := range blobs {
		if b.Data == nil && b.Size > 0 {
			nr.ConfigWarnings = append(nr.ConfigWarnings, review.ConfigWarning{File: name,
				Message: fmt.Sprintf("larger than %d bytes", repoconfig.MaxFileBytes)})
			continue
		}
		files[name] = b.Data
	}
	cfg, warns := repoconfig.Load(files)
	nr.ConfigWarnings = append(nr.ConfigWarnings, warns...)
	for i := range nr.Files {
		f := &nr.Files[i]
		if f.SkipReason != "" {
			continue
		}
		if fromBase && path.Base(f.Path) == repoconfig.FileName {
			// A change to the review's own rules is always reviewed, and
			// said to apply only from the next review on.
			nr.ConfigWarnings = append(nr.ConfigWarnings, review.ConfigWarning{File: f.Path,
				Message: "changed by this change: the review follows the configuration the base holds; the change applies from the next review on"})
		} else if ignored, _ := cfg.Ignored(f.Path); ignored {
			f.SkipReason, f.Content = ReasonRepoIgnored, nil
			continue
		}
		f.Rules = cfg.For(f.Path)
	}
}
