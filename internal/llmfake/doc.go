// Package llmfake is an OpenAI-compatible chat completion server that plays
// replies chosen by Go code. Tests use it to script conversations, structured
// outputs and tool calls and to inject 429s, 5xx, latency and malformed
// bodies; the offline demo uses it in place of a real endpoint.
package llmfake
