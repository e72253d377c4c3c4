// Package migrations embeds the SQL migrations that define the reviewfleet
// schema. They are applied by store.Migrate (the `reviewfleet migrate`
// command and local mode) with goose.
//
// # Numbering
//
// A migration's number is reserved when its schema change is planned, so
// changes prepared side by side never take the same number. 00006 and
// 00007 were reserved for changes that in the end needed no migration, so
// the sequence goes from 00005 to 00008. Gaps are harmless: goose applies
// files in the order of their numbers and does not expect them to be
// consecutive.
//
// A gap below a released migration must never be filled later, nor a new
// file numbered below a released one: goose refuses to apply a migration numbered below the
// newest one a database already has, so every deployed database would stop
// at it. TestNewMigrationsSortLast holds new files to this against the
// list of released files in migrations_test.go, which each release extends.
package migrations

import "embed"

// FS holds the numbered goose migration files.
//
//go:embed *.sql
var FS embed.FS
