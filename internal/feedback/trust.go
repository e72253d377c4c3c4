package feedback

import (
	"context"
	"log/slog"
	"strings"

	"github.com/google/go-github/v84/github"

	"github.com/reviewfleet/reviewfleet/store"
)

// writerAssociation reports whether GitHub's author_association of a
// comment says its author may write to the repository.
func writerAssociation(a string) bool {
	switch strings.ToUpper(a) {
	case "OWNER", "MEMBER", "COLLABORATOR":
		return true
	}
	return false
}

// trust looks up, once per login and sync, whether a reaction's author is
// a collaborator of the repository (reactions carry no association). A
// look-up that fails trusts nobody: a dismissal that cannot be vouched for
// is recorded but teaches nothing.
type trust struct {
	gc    *github.Client
	repo  store.Repository
	known map[string]bool
}

func (t *trust) writer(ctx context.Context, login string, log *slog.Logger) bool {
	if ok, seen := t.known[login]; seen {
		return ok
	}
	ok, _, err := t.gc.Repositories.IsCollaborator(ctx, t.repo.Owner, t.repo.Repo, login)
	if err != nil {
		log.Warn("look up whether a reaction's author may write to the repository: not trusted", "repo", t.repo.String(), "login", login, "err", err)
		ok = false
	}
	t.known[login] = ok
	return ok
}
