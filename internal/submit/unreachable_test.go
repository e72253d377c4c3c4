package submit

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/gitsrc"
)

// An unreachable remote is one sentence: no clone command line, exit
// status or wrapped fetch errors.
func TestUnreachableRemoteIsOneSentence(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/acme/api.git"
	l.Close() // nothing listens there now: the connection is refused
	_, err = Prepare(context.Background(), config.Default(), Request{Origin: FromOperator, Repo: url, Base: "main", Head: "feature", CacheDir: t.TempDir()})
	var ue *gitsrc.UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("want an UnreachableError, got %v", err)
	}
	msg := err.Error()
	t.Log(msg)
	if !strings.HasPrefix(msg, "cannot reach "+url+": ") || strings.Contains(msg, "\n") ||
		strings.Contains(msg, "exit status") || strings.Contains(msg, "git clone") || strings.Count(msg, url) != 1 {
		t.Errorf("not one sentence: %q", msg)
	}
}
