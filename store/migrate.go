package store

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/reviewfleet/reviewfleet/migrations"
)

// MigrationResult describes one applied (or reverted) migration.
type MigrationResult struct {
	Version int64
	Name    string
	Applied bool // false when reverted
}

// provider builds a goose provider that holds a Postgres session advisory
// lock while it migrates, so several `reviewfleet migrate` processes (one
// per pod of a rollout) apply each migration once: the others wait for the
// lock and then find nothing pending.
func (s *Store) provider(ctx context.Context) (*goose.Provider, func() error, error) {
	fsys, err := fs.Sub(migrations.FS, ".")
	if err != nil {
		return nil, nil, err
	}
	id, err := s.migrationLockID(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Poll every second for up to ten minutes: a long migration elsewhere
	// is waited for, a stuck one is reported.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(id), lock.WithLockTimeout(1, 600))
	if err != nil {
		return nil, nil, fmt.Errorf("build migration lock: %w", err)
	}
	db := stdlib.OpenDBFromPool(s.pool)
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithSessionLocker(locker))
	if err != nil {
		_ = db.Close()
		return nil, nil, fmt.Errorf("load migrations: %w", err)
	}
	return p, db.Close, nil
}

// migrationLockID is goose's default advisory lock ID mixed with the
// current schema: advisory locks are per database, and schemas migrated
// side by side (one per test) must not wait for each other.
func (s *Store) migrationLockID(ctx context.Context) (int64, error) {
	var schema string
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(current_schema(), '')`).Scan(&schema); err != nil {
		return 0, fmt.Errorf("read current schema for the migration lock: %w", err)
	}
	if schema == "public" {
		return lock.DefaultLockID, nil
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(schema))
	return lock.DefaultLockID ^ int64(h.Sum64()), nil
}

// Migrate applies every pending migration and returns those it applied.
func (s *Store) Migrate(ctx context.Context) ([]MigrationResult, error) {
	p, closeDB, err := s.provider(ctx)
	if err != nil {
		return nil, err
	}
	defer closeDB()
	res, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("apply migrations: %w", err)
	}
	return convert(res, true), nil
}

// MigrateDown reverts every migration (used by tests and by `migrate --down`).
func (s *Store) MigrateDown(ctx context.Context) ([]MigrationResult, error) {
	p, closeDB, err := s.provider(ctx)
	if err != nil {
		return nil, err
	}
	defer closeDB()
	res, err := p.DownTo(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("revert migrations: %w", err)
	}
	return convert(res, false), nil
}

// SchemaVersion returns the newest applied migration version (0 when none).
func (s *Store) SchemaVersion(ctx context.Context) (int64, error) {
	p, closeDB, err := s.provider(ctx)
	if err != nil {
		return 0, err
	}
	defer closeDB()
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

func convert(res []*goose.MigrationResult, up bool) []MigrationResult {
	out := make([]MigrationResult, 0, len(res))
	for _, r := range res {
		if r.Error != nil || r.Empty {
			continue
		}
		out = append(out, MigrationResult{Version: r.Source.Version, Name: r.Source.Path, Applied: up})
	}
	return out
}

// ErrSchemaBehind is returned by CheckSchema when migrations are pending.
var ErrSchemaBehind = errors.New("database schema is behind")

// CheckSchema reports, with what to do, when the database has migrations
// this binary needs still unapplied.
func (s *Store) CheckSchema(ctx context.Context) error {
	p, closeDB, err := s.provider(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	pending, err := p.HasPending(ctx)
	if err != nil {
		return fmt.Errorf("check database schema: %w", err)
	}
	if pending {
		v, _ := p.GetDBVersion(ctx)
		srcs := p.ListSources()
		return fmt.Errorf("%w: it is at version %d, this binary needs %d; run `reviewfleet migrate` first",
			ErrSchemaBehind, v, srcs[len(srcs)-1].Version)
	}
	return nil
}
