package submit

import (
	"fmt"

	"github.com/reviewfleet/reviewfleet/internal/repoconfig"
	"github.com/reviewfleet/reviewfleet/store"
)

// ReasonRepoIgnored is the skip reason of a file a .reviewfleet.yaml of the
// repository ignores.
const ReasonRepoIgnored = "ignored_by_repo_config"

// applyRepoConfig reads the repository's .reviewfleet.yaml files at the
// reviewed revision (through read, as the changed files are read), sets
// aside the files they ignore, gives every reviewed file its rules, and
// records the invalid configuration files as warnings. A configuration
// that cannot be read at all is a warning too: the review goes on with the
// defaults.
func applyRepoConfig(nr *store.NewReview, read readFiles) {
	if read == nil {
		return
	}
	paths := make([]string, 0, len(nr.Files))
	for _, f := range nr.Files {
		paths = append(paths, f.Path)
	}
	blobs, err := read(repoconfig.Paths(paths), repoconfig.MaxFileBytes+1)
	if err != nil {
		nr.ConfigWarnings = append(nr.ConfigWarnings, repoconfig.Warning{File: repoconfig.FileName,
			Message: fmt.Sprintf("could not read the repository configuration: %v", err)})
		return
	}
	files := map[string][]byte{}
	for name, b := range blobs {
		if b.Data == nil && b.Size > 0 {
			nr.ConfigWarnings = append(nr.ConfigWarnings, repoconfig.Warning{File: name,
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
		if ignored, _ := cfg.Ignored(f.Path); ignored {
			f.SkipReason, f.Content = ReasonRepoIgnored, nil
			continue
		}
		f.Rules = cfg.For(f.Path)
	}
}
