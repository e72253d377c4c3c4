// Package prompts holds what the LLM stages of the review pipeline tell the
// model and what they demand back: the system prompts and the JSON schemas
// of the structured outputs. It also decides, without an LLM, which parts of
// the intent prompt a file needs and which references the expert gets.
//
// # Texts
//
// The texts live under defaults/ and are embedded in the binary:
//
//	intent_core.txt           role, input format, anchoring, merging, severity and confidence scales
//	intent_chunked.txt        rules added when one intent call covers several files (diff only)
//	packs/<pack>.txt          one pattern pack per risk type: definition and dangerous patterns
//	verify.txt                the anchoring check of one finding
//	expert.txt                the expert investigation (the agent runtime appends its tool rules)
//	expert_focus/<risk>.txt   a focus paragraph per risk type, appended to expert.txt
//	references/<name>.txt     contract cheat sheets the expert gets on demand
//	eval.txt                  the independent quality gate
//	schemas/<stage>.json      structured-output schemas (OpenAI strict mode)
//
// System prompts are plain text without placeholders: they carry no
// per-call data, so a provider can cache them as a prefix and a hash of the
// prompt identifies its version. The stages write the per-call data into
// the user message; the prompts describe that layout (a numbered diff as
// internal/diff renders it, numbered file lines as internal/source renders
// them), so a change to either side must keep the two in step.
//
// Load lays the files of an override directory over the embedded ones; the
// override uses the same relative names.
//
// # Progressive context
//
// DetectPacks reads the added and removed lines of a file's diff and picks
// the pattern packs the intent prompt carries after the core (see
// IntentSystem). The rule has three cases:
//
//   - signals fire (a table of named keyword and pattern signals, see
//     DetectSignals): only the packs they select;
//   - the change carries code but no signal fires: every pack, the
//     conservative default;
//   - the change carries no code: no pack, the core prompt alone. A change
//     carries no code when the file is not a source file (its extension or
//     name is listed in one table: documentation, data and configuration
//     such as .md, .json, .yml, .toml, .txt, dependency manifests such as
//     go.mod, Dockerfile, Makefile…), or when every added and removed line
//     is blank, a comment (block comments and Python docstrings included)
//     or a package, import, include or require line. Unknown kinds of file
//     are read as source.
//
// Stats, Summarize and WriteStatsTable measure the saving against
// IntentSystemFull, the fixed prompt, and count the files in each case
// (FileStat.Fallback, FileStat.NoCode).
//
// DetectReferences picks the expert's references by the same kind of
// keyword detection.
package prompts
