package app

import (
	"maps"
	"testing"
)

// GITHUB_TOKEN reaches clones of the GitHub the API belongs to, and no
// other host.
func TestGitHubCloneToken(t *testing.T) {
	for _, tc := range []struct {
		api, token string
		want       map[string]string
	}{
		{"https://api.github.com/", "t1", map[string]string{"github.com": "t1"}},
		{"https://ghe.example.com/api/v3/", " t2\n", map[string]string{"ghe.example.com": "t2"}},
		{"https://api.github.com/", "", nil},
		{"not a url\x7f", "t3", nil},
	} {
		if got := gitHubCloneToken(tc.api, tc.token); !maps.Equal(got, tc.want) {
			t.Errorf("gitHubCloneToken(%q, %q) = %v, want %v", tc.api, tc.token, got, tc.want)
		}
	}
}
