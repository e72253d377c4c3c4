package store

import (
	"context"
	"fmt"
	"time"
)

// DefaultPruneBatchSize is how many rows one prune statement touches when
// PruneOptions.BatchSize is 0.
const DefaultPruneBatchSize = 1000

// PruneOptions says what Prune removes.
type PruneOptions struct {
	// Before: reviews created before it go (with their stored LLM calls),
	// and so do LLM calls made outside any review before it. Reviews still
	// queued or running are never pruned.
	Before time.Time
	// KeepVerdicts keeps the reviews, findings and verdicts (the history the
	// views read) and drops only the stored prompts and replies, the expert
	// transcripts (phases and checks) and the rendered reports, which
	// `reviewfleet report` renders again from the findings when asked.
	KeepVerdicts bool
	// BatchSize bounds the rows each statement deletes; every statement is
	// its own short transaction (default DefaultPruneBatchSize).
	BatchSize int
	// DryRun counts what would go and changes nothing.
	DryRun bool
	// ReplayWindow keeps the webhook deliveries received within it,
	// whatever Before says: their payload hashes are what recognises a
	// replayed body (webhook.replay_window; 0: Before alone decides).
	ReplayWindow time.Duration
}

// PruneResult counts what Prune removed (or, in a dry run, would remove).
type PruneResult struct {
	Reviews           int64 // reviews deleted
	Findings          int64 // findings deleted (their verdicts and expert runs with them)
	Batches           int64 // batches left without reviews, deleted
	Deliveries        int64 // finished webhook deliveries, deleted
	LLMCalls          int64 // stored LLM calls (prompts and replies) deleted
	Messages          int64 // stored exchange parts (llm_messages) no call refers to any more, deleted
	Reports           int64 // rendered reports deleted (KeepVerdicts)
	ExpertTranscripts int64 // expert runs whose phases and checks were emptied (KeepVerdicts)
}

// prunable selects the reviews Prune may remove: created before $n and
// finished. alias qualifies the columns ("" for none).
func prunable(alias string, n int) string {
	if alias != "" {
		alias += "."
	}
	return fmt.Sprintf("%[1]screated_at < $%[2]d AND %[1]sstatus IN ('done', 'failed')", alias, n)
}

// Prune removes old history in bounded batches: first the stored LLM calls
// of every prunable review (the prompts and replies, the bulk of the data
// and the most sensitive part), then messages no call refers to, then the
// reviews themselves — or, with KeepVerdicts, only their reports and expert
// transcripts. Interrupted, it leaves a consistent database and a later run
// carries on.
func (s *Store) Prune(ctx context.Context, o PruneOptions) (PruneResult, error) {
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultPruneBatchSize
	}
	if o.Before.IsZero() {
		return PruneResult{}, fmt.Errorf("prune: no cut-off time")
	}
	if o.DryRun {
		return s.pruneCount(ctx, o)
	}
	var res PruneResult
	err := s.eachPrunableChunk(ctx, o, func(ids []string) error {
		n, err := s.deleteBatches(ctx, `DELETE FROM llm_calls WHERE id IN (
			SELECT id FROM llm_calls WHERE review_id = ANY($1) LIMIT $2)`, ids, o.BatchSize)
		res.LLMCalls += n
		if err != nil {
			return fmt.Errorf("delete stored llm calls: %w", err)
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	n, err := s.deleteBatches(ctx, `DELETE FROM llm_calls WHERE id IN (
		SELECT id FROM llm_calls WHERE review_id IS NULL AND created_at < $1 LIMIT $2)`, o.Before, o.BatchSize)
	res.LLMCalls += n
	if err != nil {
		return res, fmt.Errorf("delete stored llm calls made outside reviews: %w", err)
	}
	if res.Messages, err = s.pruneMessages(ctx, o.BatchSize, false); err != nil {
		return res, err
	}
	if o.KeepVerdicts {
		err = s.eachPrunableChunk(ctx, o, func(ids []string) error {
			n, err := s.deleteBatches(ctx, `DELETE FROM reports WHERE review_id IN (
				SELECT review_id FROM reports WHERE review_id = ANY($1) LIMIT $2)`, ids, o.BatchSize)
			res.Reports += n
			if err != nil {
				return fmt.Errorf("delete reports: %w", err)
			}
			n, err = s.deleteBatches(ctx, `UPDATE expert_runs SET phases = '[]', checks = '[]' WHERE id IN (
				SELECT id FROM expert_runs WHERE review_id = ANY($1)
				AND (phases <> '[]'::jsonb OR checks <> '[]'::jsonb) LIMIT $2)`, ids, o.BatchSize)
			res.ExpertTranscripts += n
			if err != nil {
				return fmt.Errorf("empty expert transcripts: %w", err)
			}
			return nil
		})
		return res, err
	}
	err = s.eachPrunableChunk(ctx, o, func(ids []string) error {
		n, err := s.deleteBatches(ctx, `DELETE FROM findings WHERE id IN (
			SELECT id FROM findings WHERE review_id = ANY($1) LIMIT $2)`, ids, o.BatchSize)
		res.Findings += n
		if err != nil {
			return fmt.Errorf("delete findings: %w", err)
		}
		for _, table := range []string{"review_files", "stage_items"} {
			if _, err := s.deleteBatches(ctx, `DELETE FROM `+table+` WHERE ctid = ANY(ARRAY(
				SELECT ctid FROM `+table+` WHERE review_id = ANY($1) LIMIT $2))`, ids, o.BatchSize); err != nil {
				return fmt.Errorf("delete %s: %w", table, err)
			}
		}
		tag, err := s.pool.Exec(ctx, `DELETE FROM reviews WHERE id = ANY($1) AND `+prunable("", 2),
			ids, o.Before)
		if err != nil {
			return fmt.Errorf("delete reviews: %w", err)
		}
		res.Reviews += tag.RowsAffected()
		return nil
	})
	if err != nil {
		return res, err
	}
	res.Batches, err = s.deleteBatches(ctx, `DELETE FROM batches WHERE id IN (
		SELECT b.id FROM batches b WHERE b.created_at < $1 AND b.status <> 'submitting'
		AND NOT EXISTS (SELECT 1 FROM reviews r WHERE r.batch_id = b.id) LIMIT $2)`, o.Before, o.BatchSize)
	if err != nil {
		return res, fmt.Errorf("delete emptied batches: %w", err)
	}
	res.Deliveries, err = s.deleteBatches(ctx, `DELETE FROM webhook_deliveries WHERE id IN (
		SELECT id FROM webhook_deliveries WHERE received_at < $1
		AND (status IN ('skipped', 'failed', 'posted') OR (status = 'submitted' AND NOT post)) LIMIT $2)`, deliveriesBefore(o), o.BatchSize)
	if err != nil {
		return res, fmt.Errorf("delete finished webhook deliveries: %w", err)
	}
	return res, nil
}

// deliveriesBefore is the time before which finished webhook deliveries
// may go: o.Before, or earlier when the replay window reaches back further.
func deliveriesBefore(o PruneOptions) time.Time {
	if o.ReplayWindow <= 0 {
		return o.Before
	}
	if w := time.Now().Add(-o.ReplayWindow); w.Before(o.Before) {
		return w
	}
	return o.Before
}

// eachPrunableChunk calls fn with the IDs of prunable reviews, at most
// o.BatchSize at a time, walking them in creation order.
func (s *Store) eachPrunableChunk(ctx context.Context, o PruneOptions, fn func(ids []string) error) error {
	var lastAt time.Time
	lastID := "00000000-0000-0000-0000-000000000000"
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rows, err := s.pool.Query(ctx, `
			SELECT id::text, created_at FROM reviews
			WHERE `+prunable("", 1)+` AND (created_at, id) > ($2, $3::uuid)
			ORDER BY created_at, id LIMIT $4`, o.Before, lastAt, lastID, o.BatchSize)
		if err != nil {
			return fmt.Errorf("list reviews to prune: %w", err)
		}
		var ids []string
		for rows.Next() {
			if err := rows.Scan(&lastID, &lastAt); err != nil {
				rows.Close()
				return fmt.Errorf("list reviews to prune: %w", err)
			}
			ids = append(ids, lastID)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("list reviews to prune: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		if err := fn(ids); err != nil {
			return err
		}
		if len(ids) < o.BatchSize {
			return nil
		}
	}
}

// deleteBatches runs a statement (which touches at most a batch of rows)
// until it touches none and returns the rows touched. Each run is its own
// transaction.
func (s *Store) deleteBatches(ctx context.Context, sql string, args ...any) (int64, error) {
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		tag, err := s.pool.Exec(ctx, sql, args...)
		if err != nil {
			return total, err
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() == 0 {
			return total, nil
		}
	}
}

// messageGrace spares exchange parts stored recently: a call stores its
// parts before its own row, so a part younger than this may be about to be
// referred to.
const messageGrace = time.Hour

// pruneMessages deletes (or counts) the stored exchange parts
// (llm_messages) no call refers to any more, limit at a time. The hashes
// calls refer to are collected once, into a temporary table on one
// connection, rather than by every batch: each collection reads all of
// llm_calls. A part a call refers to anew meanwhile is younger than
// messageGrace again (storing it refreshes seen_at) and stays.
func (s *Store) pruneMessages(ctx context.Context, limit int, count bool) (int64, error) {
	if count {
		return s.CountUnreferencedMessages(ctx, messageGrace)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("prune stored exchange parts: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `
		CREATE TEMPORARY TABLE IF NOT EXISTS prune_refs (hash text PRIMARY KEY) ON COMMIT PRESERVE ROWS;
		TRUNCATE prune_refs;
		INSERT INTO prune_refs `+referencedHashes+` ON CONFLICT DO NOTHING;
		ANALYZE prune_refs`); err != nil {
		return 0, fmt.Errorf("collect the exchange parts calls refer to: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS prune_refs`) }()
	var total int64
	for {
		tag, err := conn.Exec(ctx, `
			DELETE FROM llm_messages WHERE hash IN (
				SELECT m.hash FROM llm_messages m
				WHERE m.seen_at < now() - $1::interval
				  AND NOT EXISTS (SELECT 1 FROM prune_refs r WHERE r.hash = m.hash)
				LIMIT $2)`, interval(messageGrace), limit)
		if err != nil {
			return total, fmt.Errorf("delete unreferenced exchange parts: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() == 0 {
			return total, nil
		}
	}
}

// pruneCount is Prune's dry run: it counts what a run would remove now.
// Messages are counted as they stand: those the run would leave unused on
// top are not known before the calls are gone.
func (s *Store) pruneCount(ctx context.Context, o PruneOptions) (PruneResult, error) {
	var res PruneResult
	q := `SELECT
		(SELECT count(*) FROM reviews WHERE ` + prunable("", 1) + `),
		(SELECT count(*) FROM findings f JOIN reviews r ON r.id = f.review_id WHERE ` + prunable("r", 1) + `),
		(SELECT count(*) FROM llm_calls c JOIN reviews r ON r.id = c.review_id WHERE ` + prunable("r", 1) + `)
		  + (SELECT count(*) FROM llm_calls WHERE review_id IS NULL AND created_at < $1),
		(SELECT count(*) FROM reports p JOIN reviews r ON r.id = p.review_id WHERE ` + prunable("r", 1) + `),
		(SELECT count(*) FROM expert_runs e JOIN reviews r ON r.id = e.review_id WHERE ` + prunable("r", 1) + `
		   AND (e.phases <> '[]'::jsonb OR e.checks <> '[]'::jsonb))`
	var reviews, findings, reports, transcripts int64
	if err := s.pool.QueryRow(ctx, q, o.Before).Scan(&reviews, &findings, &res.LLMCalls, &reports, &transcripts); err != nil {
		return res, fmt.Errorf("count what prune would remove: %w", err)
	}
	if o.KeepVerdicts {
		res.Reports, res.ExpertTranscripts = reports, transcripts
	} else {
		res.Reviews, res.Findings = reviews, findings
	}
	var err error
	res.Messages, err = s.pruneMessages(ctx, o.BatchSize, true)
	return res, err
}
