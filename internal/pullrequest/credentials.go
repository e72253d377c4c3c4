package pullrequest

// HasCredentials reports whether the clients act with credentials (a
// token or a GitHub App): reading feedback needs them.
func (c *Clients) HasCredentials() bool {
	return c.token != "" || c.cfg.AppID != 0
}
