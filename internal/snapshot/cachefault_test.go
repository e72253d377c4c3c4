package snapshot

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A cache that refuses to be written ends the expert's Acquire with the
// cause first; a missing source keeps the fallback to the changed files.
func TestCacheFaultNamesTheCause(t *testing.T) {
	t.Parallel()
	wrap := func(e syscall.Errno) error {
		return fmt.Errorf("lock /c/trees: %w", &os.PathError{Op: "mkdir", Path: "/c/trees", Err: e})
	}
	for _, tc := range []struct {
		err  error
		want string // "" when the error is not the cache's
	}{
		{wrap(syscall.EROFS), "snapshot cache not writable: "},
		{wrap(syscall.EACCES), "snapshot cache not writable: "},
		{wrap(syscall.ENOSPC), "snapshot cache full: "},
		{wrap(syscall.EMFILE), "snapshot cache unusable (too many open files): "},
		{wrap(syscall.ENOENT), ""},
		{errors.New("the repository /r is not on this worker"), ""},
	} {
		got := cacheFault(tc.err)
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("cacheFault(%v) = %v, want nil (the fallback still serves)", tc.err, got)
		case tc.want != "" && (got == nil || !strings.HasPrefix(got.Error(), tc.want) || !errors.Is(got, tc.err)):
			t.Errorf("cacheFault(%v) = %v, want it to start %q and wrap the cause", tc.err, got, tc.want)
		}
	}
}
