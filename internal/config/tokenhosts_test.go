package config

import (
	"strings"
	"testing"
)

// The git token's hosts are https URL prefixes; plain http is accepted for
// a loopback host only, and the environment sets them comma-separated.
func TestGitTokenHosts(t *testing.T) {
	t.Parallel()
	cfg, err := load("", env(map[string]string{"REVIEWFLEET_SNAPSHOT_GIT_TOKEN_HOSTS": "https://gitlab.example.com/, github.com/acme, http://127.0.0.1:3000/"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.Snapshot.GitTokenHosts, " "); got != "https://gitlab.example.com/ github.com/acme http://127.0.0.1:3000/" {
		t.Errorf("git_token_hosts = %q", got)
	}
	for _, bad := range []string{"http://gitlab.example.com/", "https://user@github.com/", "ftp://github.com/"} {
		_, err := load("", env(map[string]string{"REVIEWFLEET_SNAPSHOT_GIT_TOKEN_HOSTS": bad}))
		if err == nil || !strings.Contains(err.Error(), "snapshot.git_token_hosts") {
			t.Errorf("%s: %v, want an error naming snapshot.git_token_hosts", bad, err)
		}
	}
}
