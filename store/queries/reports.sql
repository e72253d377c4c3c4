-- name: SaveReport :exec
INSERT INTO reports (review_id, markdown, json, sarif) VALUES (@review_id, @markdown, @json, @sarif)
ON CONFLICT (review_id) DO UPDATE
SET markdown = EXCLUDED.markdown, json = EXCLUDED.json, sarif = EXCLUDED.sarif, created_at = now();

-- name: GetReport :one
SELECT markdown, json, sarif, created_at FROM reports WHERE review_id = @review_id;

-- name: SaveConfigWarnings :exec
UPDATE reviews SET config_warnings = @warnings WHERE id = @id;

-- name: ConfigWarnings :one
SELECT config_warnings FROM reviews WHERE id = @id;

-- name: Setting :one
SELECT current_setting(@name::text)::text;
