-- name: InsertEvalRun :exec
INSERT INTO eval_runs (id, dataset, label, judge_model, match_window, harness, cases, golden,
                       tp, fp, fn, precision, recall, f1, runtime_ms, llm_calls, tokens_in, tokens_out,
                       cost, judge_calls, judge_cost)
VALUES (@id, @dataset, @label, @judge_model, @match_window, @harness, @cases, @golden,
        @tp, @fp, @fn, @precision, @recall, @f1, @runtime_ms, @llm_calls, @tokens_in, @tokens_out,
        @cost, @judge_calls, @judge_cost);

-- name: InsertEvalResult :exec
INSERT INTO eval_results (run_id, case_name, review_id, golden, tp, fp, fn, runtime_ms, llm_calls,
                          tokens_in, tokens_out, cost, error, detail)
VALUES (@run_id, @case_name, sqlc.narg(review_id), @golden, @tp, @fp, @fn, @runtime_ms, @llm_calls,
        @tokens_in, @tokens_out, @cost, @error, @detail);

-- name: GetEvalRun :one
SELECT * FROM eval_runs WHERE id = @id;

-- name: EvalResults :many
SELECT * FROM eval_results WHERE run_id = @run_id ORDER BY case_name;
