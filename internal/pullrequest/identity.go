package pullrequest

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Identity is the login the clients act as on host: the token's user, or
// the App's bot ("SLUG[bot]"). Posting trusts only reviews and comments
// written by it, so a marker copied into someone else's comment cannot
// take the place of the bot's review or silence a finding. It is looked up
// once per host.
func (c *Clients) Identity(ctx context.Context, host string) (string, error) {
	c.mu.Lock()
	login, ok := c.logins[host]
	c.mu.Unlock()
	if ok {
		return login, nil
	}
	apiURL, err := APIURLFor(c.cfg.APIURL, host)
	if err != nil {
		return "", err
	}
	key, err := c.appKey()
	if err != nil {
		return "", err
	}
	if key == nil {
		gc, err := c.newClient(apiURL, c.token)
		if err != nil {
			return "", err
		}
		u, _, err := gc.Users.Get(ctx, "")
		if err != nil {
			return "", fmt.Errorf("find who the GitHub token acts as: %w", err)
		}
		login = u.GetLogin()
	} else {
		jwt, err := AppJWT(c.cfg.AppID, key, time.Now())
		if err != nil {
			return "", err
		}
		gc, err := c.newClient(apiURL, jwt)
		if err != nil {
			return "", err
		}
		app, _, err := gc.Apps.Get(ctx, "")
		if err != nil {
			return "", fmt.Errorf("find the GitHub App's name: %w", err)
		}
		login = app.GetSlug() + "[bot]"
	}
	if strings.TrimSpace(login) == "" || login == "[bot]" {
		return "", fmt.Errorf("GitHub on %s named no login for the credentials", host)
	}
	c.mu.Lock()
	c.logins[host] = login
	c.mu.Unlock()
	return login, nil
}
