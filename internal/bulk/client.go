package bulk

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v84/github"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/reviewfleet/reviewfleet/internal/childtrace"
	"github.com/reviewfleet/reviewfleet/internal/credscope"
	"github.com/reviewfleet/reviewfleet/internal/pullrequest"
)

// NewGitHubClient builds the GitHub REST client the bulk command lists pull
// requests with: o's HTTP client, token and API base URL. The token goes
// to the API's origin only, never where a redirect points.
func NewGitHubClient(o GitHubOptions) (*github.Client, error) {
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport, otelhttp.WithTracerProvider(childtrace.ChildOnly()))}
	}
	base := o.APIURL
	if base == "" {
		base = pullrequest.DefaultAPIURL
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("github api url %q: %w", o.APIURL, err)
	}
	if o.Token != "" {
		rt := hc.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		if rt, err = pullrequest.AuthTransport(rt, base, o.Token); err != nil {
			return nil, err
		}
		authed := *hc
		authed.Transport, authed.CheckRedirect = rt, credscope.CheckRedirect
		hc = &authed
	}
	client := github.NewClient(hc)
	client.BaseURL = u
	return client, nil
}
