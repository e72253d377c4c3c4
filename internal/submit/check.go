package submit

import (
	"errors"
	"fmt"
	"os"
)

// CheckRequest finds the mistakes in req that need neither a database, a
// queue nor a model, so a command can report them before it opens any of
// those (and before their notices, such as a missing LLM endpoint, bury
// the real problem).
func CheckRequest(req Request) error {
	switch {
	case req.DiffFile == "-":
		return errors.New("reading a diff from standard input is not supported; save it to a file")
	case req.DiffFile != "":
		if _, err := os.Stat(req.DiffFile); err != nil {
			return fmt.Errorf("--diff: %w", err)
		}
	case req.Repo == "":
		return errors.New("nothing to review: give --repo DIR with --base and --head, or --diff FILE")
	case req.Base == "" || req.Head == "":
		return errors.New("reviewing a repository needs both --base and --head")
	}
	if req.Repo != "" && !IsRemote(req.Repo) {
		if fi, err := os.Stat(req.Repo); err != nil {
			return fmt.Errorf("--repo: %w", err)
		} else if !fi.IsDir() {
			return fmt.Errorf("--repo %s is not a directory", req.Repo)
		}
	}
	return nil
}
