-- Named advisory locks. A lock's key is its name within the current
-- schema, so that schemas side by side on one server (tests) do not
-- exclude each other; TakeNamedLock (github.sql) uses the same key.

-- name: TryNamedLock :one
SELECT pg_try_advisory_lock(hashtextextended(coalesce(current_schema(), '') || ':' || @name::text, 0))::boolean;

-- name: HoldsNamedLock :one
SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_locks
               WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
                 AND ((classid::bigint << 32) | objid::bigint)
                     = hashtextextended(coalesce(current_schema(), '') || ':' || @name::text, 0))::boolean;

-- name: ReleaseNamedLock :exec
SELECT pg_advisory_unlock(hashtextextended(coalesce(current_schema(), '') || ':' || @name::text, 0));
