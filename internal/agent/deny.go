package agent

import "github.com/reviewfleet/reviewfleet/internal/diff"

// DefaultDeny lists the paths the expert's tools never read, list or
// search when Config.Deny is empty. It is diff.DefaultDeny: the submission
// leaves the same files out of every stage (diff.ReasonDenied).
var DefaultDeny = diff.DefaultDeny

// msgDenied ends the tool error of a path the policy refuses.
const msgDenied = "denied by sandbox policy"

// denyList decides which repository paths the sandbox refuses: the
// submission's rule (diff.DenyList), .git always, case-insensitively.
type denyList struct {
	diff.DenyList
}

// newDenyList returns the policy: .git always, then globs, or DefaultDeny
// when globs is empty.
func newDenyList(globs []string) denyList {
	return denyList{diff.NewDenyList(globs)}
}

// denied reports whether the slash-separated relative path rel, or one of
// the directories on the way to it, matches the policy.
func (d denyList) denied(rel string) bool { return d.Denied(rel) }

// Denied reports whether the expert's tools refuse the repository path rel
// (slash-separated, relative) under the deny globs (DefaultDeny when empty),
// so that snapshots can leave such files out.
func Denied(globs []string, rel string) bool { return diff.Denied(globs, rel) }
