-- name: InsertFinding :exec
INSERT INTO findings (review_id, origin, ordinal, risk_type, file, line_start, line_end,
                      description, suggestion, severity, confidence_initial, confidence, quote, fix_diff, fingerprint)
VALUES (@review_id, @origin, @ordinal, @risk_type, @file, @line_start, @line_end, @description,
        @suggestion, @severity, @confidence, @confidence, @quote, @fix_diff, @fingerprint)
ON CONFLICT (review_id, origin, ordinal) DO NOTHING;

-- name: ListFindings :many
SELECT * FROM findings WHERE review_id = $1 ORDER BY id;

-- name: GetFinding :one
SELECT * FROM findings WHERE id = $1;

-- name: ResolvedFindings :many
SELECT * FROM findings WHERE resolved_in = @review_id::uuid ORDER BY id;

-- name: InsertVerdict :execrows
INSERT INTO verdicts (review_id, finding_id, stage, verdict, confidence_before, confidence_after,
                      reason, evidence, model, tokens_in, tokens_out, latency_ms)
VALUES (@review_id, @finding_id, @stage, @verdict, @confidence_before, @confidence_after,
        @reason, @evidence, @model, @tokens_in, @tokens_out, @latency_ms)
ON CONFLICT (finding_id, stage) DO NOTHING;

-- name: SetFindingConfidence :exec
UPDATE findings SET confidence = @confidence WHERE id = @id;

-- name: InsertExpertRun :execrows
INSERT INTO expert_runs (review_id, finding_id, stop_reason, rounds, tool_calls, phases, checks,
                         tokens_in, tokens_out, duration_ms, error, tool_outcomes)
VALUES (@review_id, @finding_id, @stop_reason, @rounds, @tool_calls, @phases, @checks,
        @tokens_in, @tokens_out, @duration_ms, @error, @tool_outcomes)
ON CONFLICT (finding_id) DO NOTHING;

-- name: InsertToolCalls :exec
-- One statement for all the calls of a run: the arrays are its columns.
INSERT INTO expert_tool_calls (review_id, finding_id, round, seq, tool, args, outcome, result_bytes, latency_ms)
SELECT @review_id, @finding_id, unnest(@rounds::int[]), unnest(@seqs::int[]), unnest(@tools::text[]),
       unnest(@args::text[]), unnest(@outcomes::text[]), unnest(@result_bytes::int[]), unnest(@latencies_ms::int[])
ON CONFLICT (finding_id, seq) DO NOTHING;

-- name: ListExpertToolCalls :many
SELECT finding_id, round, seq, tool, args, outcome, result_bytes, latency_ms
FROM expert_tool_calls WHERE review_id = @review_id ORDER BY finding_id, seq;

-- name: ListVerdicts :many
SELECT finding_id, stage, verdict, confidence_before, confidence_after, reason, evidence,
       model, tokens_in, tokens_out, latency_ms, created_at
FROM verdicts WHERE review_id = @review_id ORDER BY finding_id, id;

-- name: ListExpertRuns :many
SELECT finding_id, stop_reason, rounds, tool_calls, phases, checks, tokens_in, tokens_out,
       duration_ms, error, tool_outcomes
FROM expert_runs WHERE review_id = @review_id;

-- name: EvalSummary :many
SELECT f.risk_type,
       count(*) FILTER (WHERE v.verdict = 'confirmed') AS confirmed,
       count(*) FILTER (WHERE v.verdict = 'disputed') AS disputed,
       count(*) FILTER (WHERE v.verdict = 'uncertain') AS uncertain
FROM verdicts v JOIN findings f ON f.id = v.finding_id
WHERE v.review_id = @review_id AND v.stage = 'eval' AND v.verdict IN ('confirmed', 'disputed', 'uncertain')
GROUP BY f.risk_type;

-- name: GetVerdict :one
SELECT review_id, verdict, confidence_before, confidence_after, reason, evidence, model,
       tokens_in, tokens_out, latency_ms, created_at
FROM verdicts WHERE finding_id = @finding_id AND stage = @stage;
