package snapshot

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/credscope"
)

// A host token is asked for https remotes only, with the host and the
// repository path; a credential in the URL and the fleet's token for the
// remote's host come first, and a failure to get one is an error naming
// the remote. A host written with a user part, an escape or a trailing
// dot is not asked about.
func TestRemoteHostToken(t *testing.T) {
	t.Setenv(TokenEnv, "")
	var asked []string
	c := &Cache{HostToken: func(_ context.Context, host, path string) (string, error) {
		asked = append(asked, host+path)
		if host == "github.com" {
			return "gh", nil
		}
		return "", nil
	}}
	ctx := context.Background()
	for raw, want := range map[string]string{
		"https://github.com/acme/api.git":     "gh",
		"https://GitHub.com/acme/api.git":     "gh",
		"https://gitlab.com/acme/api.git":     "",
		"https://own:tok@github.com/acme/api": "tok",
		"http://github.com/acme/api.git":      "",
		"ssh://git@github.com/acme/api.git":   "",
		"https://github.com./acme/api.git":    "",
	} {
		r, err := c.Remote(ctx, raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if r.Token != want {
			t.Errorf("%s: token %q, want %q", raw, r.Token, want)
		}
	}
	slices.Sort(asked)
	if want := []string{"github.com/acme/api.git", "github.com/acme/api.git", "gitlab.com/acme/api.git"}; !slices.Equal(asked, want) {
		t.Errorf("asked for %v, want %v: the https remotes without a credential, host in lower case", asked, want)
	}

	t.Setenv(TokenEnv, "general")
	c.TokenScopes = credscope.Set{credscope.MustParse("https://github.com/acme")}
	for raw, want := range map[string]string{
		"https://github.com/acme/api.git":      "general",
		"https://github.com/acme-evil/api.git": "gh",
		"https://gitlab.com/acme/api.git":      "",
		"https://github.com.evil.com/acme/x":   "",
		"http://github.com/acme/api.git":       "",
		"https://github.com:8443/acme/api.git": "",
	} {
		if r, _ := c.Remote(ctx, raw); r.Token != want {
			t.Errorf("%s: token %q, want %q: the fleet's token goes only under its scope", raw, r.Token, want)
		}
	}
	c.TokenScopes = nil
	if r, _ := c.Remote(ctx, "https://gitlab.com/acme/api.git"); r.Token != "" {
		t.Errorf("token %q with no scope configured, want none", r.Token)
	}

	t.Setenv(TokenEnv, "")
	c.HostToken = func(context.Context, string, string) (string, error) { return "", errors.New("installation not found") }
	if _, err := c.Remote(ctx, "https://github.com/acme/api.git"); err == nil ||
		!strings.Contains(err.Error(), "https://github.com/acme/api.git") || !strings.Contains(err.Error(), "installation not found") {
		t.Errorf("a failing host token: %v, want an error naming the remote and the cause", err)
	}
}
