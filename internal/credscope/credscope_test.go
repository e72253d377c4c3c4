package credscope

import (
	"github.com/reviewfleet/reviewfleet/internal/credscope/credscopetest"
	"io"
	"net/http"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]string{
		"github.com":                         "https://github.com:443/",
		"https://GitHub.com/":                "https://github.com:443/",
		"https://git.example.com:8443/acme/": "https://git.example.com:8443/acme/",
		"http://127.0.0.1:18770":             "http://127.0.0.1:18770/",
		"http://localhost/x":                 "http://localhost:80/x/",
		"http://[::1]:9/":                    "http://[::1]:9/",
	} {
		s, err := Parse(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if s.String() != want {
			t.Errorf("%s: %s, want %s", in, s, want)
		}
	}
	for _, in := range []string{
		"", "http://github.com/", "http://10.0.0.1/", "ftp://github.com/", "https://user@github.com/",
		"https://github.com/?x=1", "https://github.com/a/../b", "https://git%68ub.com/", "https://github.com./",
		"https://gïthub.com/", "ssh://github.com/",
	} {
		if s, err := Parse(in); err == nil {
			t.Errorf("%q accepted as %s", in, s)
		}
	}
}

func TestMatches(t *testing.T) {
	gh := MustParse("https://github.com/")
	acme := MustParse("https://git.example.com/acme")
	loop := MustParse("http://127.0.0.1:18770/")
	cases := []struct {
		s    Scope
		url  string
		want bool
	}{
		{gh, "https://github.com/acme/app.git", true},
		{gh, "https://GITHUB.COM/acme/app.git", true},
		{gh, "https://github.com:443/acme/app.git", true},
		{gh, "https://github.com:444/acme/app.git", false},
		{gh, "http://github.com/acme/app.git", false},
		{gh, "https://github.com.evil.com/acme/app.git", false},
		{gh, "https://evilgithub.com/acme/app.git", false},
		{gh, "https://github.com@evil.com/acme/app.git", false},
		{gh, "https://x:y@github.com/acme/app.git", false},
		{gh, "https://evil.com\\@github.com/acme", false},
		{gh, "https://github.com./acme/app.git", false},
		{gh, "https://git%68ub.com/acme/app.git", false},
		{gh, "https://xn--gthub-2ra.com/acme", false},
		{gh, "https://gïthub.com/acme", false},
		{gh, "https://api.github.com/", false},
		{acme, "https://git.example.com/acme/app.git", true},
		{acme, "https://git.example.com/acme", true},
		{acme, "https://git.example.com/acme-evil/app.git", false},
		{acme, "https://git.example.com/acme/../other/app.git", false},
		{acme, "https://git.example.com/acme/%2e%2e/other/app.git", false},
		{acme, "https://git.example.com/other/app.git", false},
		{loop, "http://127.0.0.1:18770/acme/app.git", true},
		{loop, "http://127.0.0.1:18771/acme/app.git", false},
		{loop, "https://127.0.0.1:18770/acme/app.git", false},
		{loop, "http://localhost:18770/acme/app.git", false},
	}
	for _, c := range cases {
		if got := c.s.MatchesString(c.url); got != c.want {
			t.Errorf("%s matches %s: %v, want %v", c.s, c.url, got, c.want)
		}
	}
	set := Set{gh, acme}
	if !set.MatchesString("https://git.example.com/acme/x") || set.MatchesString("https://gitlab.com/x") {
		t.Error("a set matches what one of its scopes matches, and nothing else")
	}
}

// A redirect from the credential's origin to another one reaches the other
// origin without the credential, with the Transport alone and with
// CheckRedirect on a client whose requests carry it themselves.
func TestTransportDropsCredentialOnRedirect(t *testing.T) {
	other := credscopetest.NewHeaderLog(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	home := credscopetest.NewHeaderLog(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/stolen", http.StatusFound)
	})
	scope := MustParse(home.URL)
	hc := &http.Client{Transport: &Transport{Scope: scope, Header: "Authorization", Value: "Bearer secret"}}
	resp, err := hc.Get(home.URL + "/repos/acme/app")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := home.Seen(); len(got) != 1 || got[0] != "Bearer secret" {
		t.Errorf("the credential's own origin received %q, want the credential once", got)
	}
	if got := other.Seen(); len(got) != 1 || got[0] != "" {
		t.Errorf("the other origin received %q, want one request without Authorization", got)
	}

	hc2 := &http.Client{CheckRedirect: CheckRedirect}
	req, _ := http.NewRequest(http.MethodGet, home.URL+"/x", nil)
	req.Header.Set("Authorization", "Bearer own")
	resp, err = hc2.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := other.Seen(); len(got) != 2 || got[1] != "" {
		t.Errorf("the other origin received %q, want the second request without Authorization", got)
	}
}

// A scope's credential is never attached to a request elsewhere, and a
// credential someone else put on such a request is taken off.
func TestTransportOnlyForScope(t *testing.T) {
	srv := credscopetest.NewHeaderLog(t, func(w http.ResponseWriter, r *http.Request) {})
	tr := &Transport{Scope: MustParse("https://github.com/"), Header: "Authorization", Value: "Bearer secret"}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Authorization", "Bearer planted")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := srv.Seen(); len(got) != 1 || got[0] != "" {
		t.Errorf("received %q, want no Authorization", got)
	}
	if req.Header.Get("Authorization") != "Bearer planted" {
		t.Error("the caller's request was modified")
	}
}
