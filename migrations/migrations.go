// Package migrations embeds the SQL migrations that define the reviewfleet
// schema. They are applied by store.Migrate (the `reviewfleet migrate`
// command and local mode) with goose.
package migrations

import "embed"

// FS holds the numbered goose migration files.
//
//go:embed *.sql
var FS embed.FS
