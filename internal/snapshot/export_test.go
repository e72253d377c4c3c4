package snapshot

// TreeDir exposes where the cache keeps commit sha's redacted head tree.
func TreeDir(c *Cache, sha string) string { return c.treeDir(sha) }
