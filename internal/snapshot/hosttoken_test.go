package snapshot

import "testing"

// A host token authenticates https remotes of its host only, and the
// general token comes first.
func TestRemoteHostTokens(t *testing.T) {
	t.Setenv(TokenEnv, "")
	c := &Cache{HostTokens: map[string]string{"github.com": "gh"}}
	for raw, want := range map[string]string{
		"https://github.com/acme/api.git":     "gh",
		"https://GitHub.com/acme/api.git":     "gh",
		"https://gitlab.com/acme/api.git":     "",
		"https://own:tok@github.com/acme/api": "tok",
		"ssh://git@github.com/acme/api.git":   "",
	} {
		r, err := c.Remote(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if r.Token != want {
			t.Errorf("%s: token %q, want %q", raw, r.Token, want)
		}
	}
	t.Setenv(TokenEnv, "general")
	if r, _ := c.Remote("https://github.com/acme/api.git"); r.Token != "general" {
		t.Errorf("token %q, want the general one first", r.Token)
	}
}
