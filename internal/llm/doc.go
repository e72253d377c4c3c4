// Package llm is reviewfleet's access layer to OpenAI-compatible chat
// completion endpoints. It wraps the go-openai client with what every stage
// needs: per-call identity (review, stage, item, model), transport-level
// retries for 5xx and network errors, rate limiting shared by a worker's
// goroutines or by the whole fleet through Redis, per-review budgets, a record
// of every call, and structured output with a tolerant JSON extractor, a small
// JSON Schema validator and one repair attempt.
package llm
