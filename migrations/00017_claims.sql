-- +goose Up
-- stage_items.attempts counts the runs that counted against the item (its
-- own faults, and the run that closed it); claims counts every time a
-- worker took the item up, outages, give-backs and rescues included.
ALTER TABLE stage_items ADD COLUMN claims integer NOT NULL DEFAULT 0;
UPDATE stage_items SET claims = attempts;

-- +goose Down
ALTER TABLE stage_items DROP COLUMN IF EXISTS claims;
