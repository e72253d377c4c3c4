package submit

import "testing"

func TestStripCredentials(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://user:ghp_s3cret@github.com/acme/api.git": "https://github.com/acme/api.git",
		"https://x-access-token:t@ghe.example/a/b":        "https://ghe.example/a/b",
		"https://github.com/acme/api.git":                 "https://github.com/acme/api.git",
		"ssh://git@host:22/a/b.git":                       "ssh://host:22/a/b.git",
		"git@github.com:acme/api.git":                     "git@github.com:acme/api.git",
		"/src/web":                                        "/src/web",
		"https://u:p%zz@host/x":                           "https://host/x",
		"https://host/a/b.git?access_token=tok123":        "https://host/a/b.git",
	} {
		if got := StripCredentials(in); got != want {
			t.Errorf("StripCredentials(%q) = %q, want %q", in, got, want)
		}
	}
}
