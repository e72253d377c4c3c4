// Package evaluation measures review quality against a dataset of changes
// with known (golden) issues: it matches a review's reported findings to
// golden issues (by line window, then optionally by an LLM judge), counts
// true and false positives and misses, compares a run with an earlier one by
// seed 000's criteria, and imports the public code-review benchmark format.
// The dataset format itself lives in internal/dataset. An Evaluator runs a
// dataset through a Reviewer (the fleet's review path, which internal/app
// wires), scores it and stores the run.
package evaluation

import "github.com/reviewfleet/reviewfleet/internal/dataset"

// The evaluation speaks of a dataset's cases and golden issues throughout;
// these names keep its API in its own terms.
type (
	// Case is one change of a dataset with its golden issues.
	Case = dataset.Case
	// Golden is one issue known to be in a case.
	Golden = dataset.Golden
	// Related is code elsewhere in a repository that makes a golden issue real.
	Related = dataset.Related
)

// LoadDataset reads every case of the dataset directory dir.
func LoadDataset(dir string) ([]Case, error) { return dataset.LoadDataset(dir) }

// IsRemote reports whether a case's repository is a remote git URL.
func IsRemote(repo string) bool { return dataset.IsRemote(repo) }
