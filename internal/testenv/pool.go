package testenv

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// A test's database comes from a pool of copies of the template that
// outlive the test process. Creating a copy and dropping it afterwards
// costs the server a file copy, a checkpoint and a cold catalog cache for
// every test (together more CPU than most tests themselves); reusing a
// copy costs deleting the few rows the last test wrote.
//
// Slot n of the pool for one set of migrations is the database
// poolPrefix+digest+"_"+n. A process owns a slot while it holds the
// session advisory lock (poolLockSpace(digest), n) on its connection to
// the base database; the lock goes with the connection, so a killed test
// process frees its slots. The owner empties the database before handing
// it out, and replaces it with a fresh copy when the schema no longer
// matches the one recorded when it was copied (a test created or dropped
// a table, ran a migration down).
//
// A process keeps its sessions for its whole life: one to the base
// database for every slot lock and the pool's bookkeeping, and one to each
// slot's database it has used, for emptying it. A new session costs the
// server a process and a cold catalog cache, 25-40 ms on a small machine,
// which each test used to pay twice.

// poolPrefix starts the name of every pooled test database.
const poolPrefix = "reviewfleet_test_"

// maxPoolSlots bounds the pool: more tests than this holding a database
// at once wait for one to be released.
const maxPoolSlots = 128

// poolSlot names a slot: the lock space of its set of migrations and its
// number.
type poolSlot struct {
	space int32
	n     int
}

// poolClient is one process's side of the pool on one server.
type poolClient struct {
	base string

	mu    sync.Mutex // guards the fields below and every use of admin
	admin *pgx.Conn  // to the base database; holds the locks of held slots
	held  map[poolSlot]bool
	// conns keeps a session to each slot's database; only the test holding
	// the slot uses it.
	conns map[poolSlot]*pgx.Conn
}

var (
	poolClientsMu sync.Mutex
	poolClients   = map[string]*poolClient{} // base DSN → client
)

// clientFor returns the process's pool client for the server base names.
func clientFor(base string) *poolClient {
	poolClientsMu.Lock()
	defer poolClientsMu.Unlock()
	c, ok := poolClients[base]
	if !ok {
		c = &poolClient{base: base, held: map[poolSlot]bool{}, conns: map[poolSlot]*pgx.Conn{}}
		poolClients[base] = c
	}
	return c
}

// closePoolClients closes every session the pool clients keep, releasing
// their slots.
func closePoolClients() {
	poolClientsMu.Lock()
	defer poolClientsMu.Unlock()
	for base, c := range poolClients {
		c.mu.Lock()
		for _, conn := range c.conns {
			_ = conn.Close(context.Background())
		}
		if c.admin != nil {
			_ = c.admin.Close(context.Background())
		}
		c.mu.Unlock()
		delete(poolClients, base)
	}
}

// withAdmin runs fn with the session to the base database, connecting it
// first when there is none. Losing that session loses the locks of every
// slot the process holds, so a broken one is not replaced while any is held.
func (c *poolClient) withAdmin(ctx context.Context, fn func(*pgx.Conn) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.admin == nil || c.admin.IsClosed() {
		if c.admin != nil && len(c.held) > 0 {
			return fmt.Errorf("the session holding this process's pool slots to %s was lost", redactDSN(c.base))
		}
		conn, err := pgx.Connect(ctx, c.base)
		if err != nil {
			return fmt.Errorf("connect to %s: %w", redactDSN(c.base), err)
		}
		c.admin = conn
	}
	return fn(c.admin)
}

// poolDatabase is a slot of the pool held by one test.
type poolDatabase struct {
	name   string
	slot   poolSlot
	client *poolClient
}

// poolLockSpace is the first key of the slots' advisory locks: one key
// space per set of migrations.
func poolLockSpace(digest string) int32 {
	h := fnv.New32a()
	h.Write([]byte(poolPrefix + digest))
	return int32(h.Sum32())
}

// poolName is the database of slot n for a template digest.
func poolName(digest string, n int) string {
	return poolPrefix + digest + "_" + strconv.Itoa(n)
}

// acquirePooled takes a free slot of the pool for template tmpl (whose
// name ends in digest), makes its database an empty copy of the template,
// and returns it. Release gives the slot back.
func acquirePooled(ctx context.Context, base, tmpl, digest string) (*poolDatabase, error) {
	c := clientFor(base)
	space := poolLockSpace(digest)
	for {
		slot, ok, err := c.lockFreeSlot(ctx, space)
		if err != nil {
			return nil, err
		}
		if ok {
			db := &poolDatabase{name: poolName(digest, slot.n), slot: slot, client: c}
			if err := c.prepare(ctx, slot, db.name, tmpl); err != nil {
				db.release()
				return nil, err
			}
			return db, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("every one of %d pooled test databases is in use: %w", maxPoolSlots, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// lockFreeSlot takes the lock of the first slot in space that neither this
// process nor another holds. A session takes an advisory lock it already
// holds again, so the process's own slots are skipped by its bookkeeping.
func (c *poolClient) lockFreeSlot(ctx context.Context, space int32) (poolSlot, bool, error) {
	var slot poolSlot
	found := false
	err := c.withAdmin(ctx, func(admin *pgx.Conn) error {
		for n := range maxPoolSlots {
			s := poolSlot{space: space, n: n}
			if c.held[s] {
				continue
			}
			var got bool
			if err := admin.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", space, int32(n)).Scan(&got); err != nil {
				return fmt.Errorf("lock pool slot %d: %w", n, err)
			}
			if got {
				c.held[s], slot, found = true, s, true
				return nil
			}
		}
		return nil
	})
	return slot, found, err
}

// release frees the slot for the next test.
func (p *poolDatabase) release() {
	c := p.client
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.held, p.slot)
	if c.admin == nil || c.admin.IsClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.admin.Exec(ctx, "SELECT pg_advisory_unlock($1, $2)", p.slot.space, int32(p.slot.n)); err != nil {
		// The lock stays with a session in doubt: end the session, which
		// frees every lock, once no other test holds a slot through it.
		if len(c.held) == 0 {
			_ = c.admin.Close(context.Background())
		}
	}
}

// slotConn returns the kept session to the slot's database, or nil.
func (c *poolClient) slotConn(slot poolSlot) *pgx.Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	if conn := c.conns[slot]; conn != nil && !conn.IsClosed() {
		return conn
	}
	return nil
}

// keepSlotConn records conn (nil: none) as the slot's session, closing the
// one it replaces.
func (c *poolClient) keepSlotConn(slot poolSlot, conn *pgx.Conn) {
	c.mu.Lock()
	old := c.conns[slot]
	if conn == nil {
		delete(c.conns, slot)
	} else {
		c.conns[slot] = conn
	}
	c.mu.Unlock()
	if old != nil && old != conn {
		_ = old.Close(context.Background())
	}
}

// prepare makes database name, of a slot the caller holds, an empty copy
// of tmpl: it copies the template when the database does not exist,
// empties it when its schema is the one recorded at copy time, and copies
// it afresh otherwise.
func (c *poolClient) prepare(ctx context.Context, slot poolSlot, name, tmpl string) error {
	kept := c.slotConn(slot)
	var recorded *string
	missing := false
	err := c.withAdmin(ctx, func(admin *pgx.Conn) error {
		err := admin.QueryRow(ctx, "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", name).Scan(&recorded)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			missing = true
			return nil
		case err != nil:
			return fmt.Errorf("look up pooled database %s: %w", name, err)
		}
		// Sessions a finished test left open (a pool it did not close)
		// must not see, or hold locks against, the next test's data.
		keep := uint32(0)
		if kept != nil {
			keep = kept.PgConn().PID()
		}
		if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND pid <> $2", name, int64(keep)); err != nil {
			return fmt.Errorf("end sessions of pooled database %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if missing {
		return c.copy(ctx, slot, name, tmpl)
	}
	if recorded != nil {
		fresh, err := c.empty(ctx, slot, kept, name, *recorded)
		if err != nil {
			return fmt.Errorf("empty pooled database %s: %w", name, err)
		}
		if fresh {
			return nil
		}
	}
	c.keepSlotConn(slot, nil)
	if err := c.withAdmin(ctx, func(admin *pgx.Conn) error { return dropDatabase(ctx, admin, name) }); err != nil {
		return fmt.Errorf("drop changed pooled database %s: %w", name, err)
	}
	return c.copy(ctx, slot, name, tmpl)
}

// empty runs emptyDatabase on the slot's kept session, or on a new one
// when there is none or the kept one fails (another process that held the
// slot since may have ended it), and keeps the session that worked.
func (c *poolClient) empty(ctx context.Context, slot poolSlot, kept *pgx.Conn, name, want string) (bool, error) {
	if kept != nil {
		if fresh, err := emptyDatabase(ctx, kept, want); err == nil {
			return fresh, nil
		} else if ctx.Err() != nil {
			return false, err
		}
	}
	conn, err := c.connectSlot(ctx, name)
	if err != nil {
		return false, err
	}
	c.keepSlotConn(slot, conn)
	return emptyDatabase(ctx, conn, want)
}

// connectSlot opens a session to pooled database name.
func (c *poolClient) connectSlot(ctx context.Context, name string) (*pgx.Conn, error) {
	dsn, err := withDatabase(c.base, name)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect to pooled database %s: %w", name, err)
	}
	return conn, nil
}

// copy creates database name from tmpl, records its schema's fingerprint
// as the database's comment, and keeps the session that read it.
func (c *poolClient) copy(ctx context.Context, slot poolSlot, name, tmpl string) error {
	if err := c.withAdmin(ctx, func(admin *pgx.Conn) error { return createFromTemplate(ctx, admin, name, tmpl) }); err != nil {
		return err
	}
	conn, err := c.connectSlot(ctx, name)
	if err != nil {
		return err
	}
	fp, err := schemaFingerprint(ctx, conn)
	if err != nil {
		_ = conn.Close(context.Background())
		return err
	}
	c.keepSlotConn(slot, conn)
	ident := pgx.Identifier{name}.Sanitize()
	return c.withAdmin(ctx, func(admin *pgx.Conn) error {
		if _, err := admin.Exec(ctx, "COMMENT ON DATABASE "+ident+" IS "+quoteLiteral(fp)); err != nil {
			return fmt.Errorf("record the schema of pooled database %s: %w", name, err)
		}
		return nil
	})
}

// schemaFingerprint summarises the objects outside the system schemas:
// every relation with its kind and columns, and every function. A test
// that changed the schema changes it.
func schemaFingerprint(ctx context.Context, conn *pgx.Conn) (string, error) {
	var fp string
	err := conn.QueryRow(ctx, `
		SELECT md5(coalesce(string_agg(o, ',' ORDER BY o), ''))
		FROM (
			SELECT n.nspname || '.' || c.relname || ':' || c.relkind::text || ':' ||
			       coalesce((SELECT string_agg(a.attname || ' ' || a.atttypid::regtype::text, ';' ORDER BY a.attnum)
			                 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') AS o
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'
			UNION ALL
			SELECT 'fn ' || n.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')'
			FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
			WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'
		) objects`).Scan(&fp)
	if err != nil {
		return "", fmt.Errorf("fingerprint the schema: %w", err)
	}
	return fp, nil
}

// emptyDatabase removes every row a test left in conn's database (the
// migrations' own version table excepted) and restarts its sequences,
// provided its schema still has fingerprint want. It reports whether the
// database is now as the template left it.
func emptyDatabase(ctx context.Context, conn *pgx.Conn, want string) (bool, error) {
	if fp, err := schemaFingerprint(ctx, conn); err != nil || fp != want {
		return false, err
	}
	var tables, sequences []string
	rows, err := conn.Query(ctx, `
		SELECT format('%I.%I', schemaname, tablename) FROM pg_tables
		WHERE schemaname = 'public' AND tablename <> 'goose_db_version'`)
	if err != nil {
		return false, fmt.Errorf("list tables: %w", err)
	}
	if tables, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return false, fmt.Errorf("list tables: %w", err)
	}
	rows, err = conn.Query(ctx, `
		SELECT format('%I.%I', schemaname, sequencename) FROM pg_sequences
		WHERE schemaname = 'public' AND last_value IS NOT NULL AND sequencename NOT LIKE 'goose\_db\_version%'`)
	if err != nil {
		return false, fmt.Errorf("list sequences: %w", err)
	}
	if sequences, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return false, fmt.Errorf("list sequences: %w", err)
	}
	if len(tables) == 0 {
		return true, nil
	}
	// Which tables hold rows, in one round trip: most tests touch a few.
	probe := make([]string, len(tables))
	for i, tbl := range tables {
		probe[i] = fmt.Sprintf("SELECT %s WHERE EXISTS (SELECT 1 FROM %s)", quoteLiteral(tbl), tbl)
	}
	rows, err = conn.Query(ctx, strings.Join(probe, " UNION ALL "))
	if err != nil {
		return false, fmt.Errorf("find tables with rows: %w", err)
	}
	used, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return false, fmt.Errorf("find tables with rows: %w", err)
	}
	var b strings.Builder
	// DELETE rather than TRUNCATE: a test writes a few rows, and deleting
	// them takes about a millisecond where TRUNCATE gives every table and
	// index (cascades included) a new file and waits 80-500 ms for it.
	// Every foreign key cascades or sets NULL, so the order of the deletes
	// does not matter. A test of query plans analyses the tables first.
	for _, tbl := range used {
		b.WriteString("DELETE FROM " + tbl + ";")
	}
	for _, seq := range sequences {
		b.WriteString("SELECT setval(" + quoteLiteral(seq) + ", 1, false);")
	}
	if b.Len() == 0 {
		return true, nil
	}
	if _, err := conn.Exec(ctx, b.String()); err != nil {
		return false, fmt.Errorf("delete rows: %w", err)
	}
	return true, nil
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
