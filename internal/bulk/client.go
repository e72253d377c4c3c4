package bulk

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v84/github"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/reviewfleet/reviewfleet/internal/telemetry"
)

// NewGitHubClient builds the GitHub REST client the bulk command lists pull
// requests with: o's HTTP client, token and API base URL.
func NewGitHubClient(o GitHubOptions) (*github.Client, error) {
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport, otelhttp.WithTracerProvider(telemetry.ChildOnly()))}
	}
	client := github.NewClient(hc)
	if o.Token != "" {
		client = client.WithAuthToken(o.Token)
	}
	if o.APIURL != "" {
		base := o.APIURL
		if !strings.HasSuffix(base, "/") {
			base += "/"
		}
		u, err := url.Parse(base)
		if err != nil {
			return nil, fmt.Errorf("github api url %q: %w", o.APIURL, err)
		}
		client.BaseURL = u
	}
	return client, nil
}
