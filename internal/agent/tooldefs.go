package agent

import openai "github.com/sashabaranov/go-openai"

// Tool names offered to the model.
const (
	toolReadFile      = "read_file"
	toolGrep          = "grep"
	toolListDir       = "list_dir"
	toolFindSymbol    = "find_symbol"
	toolSubmitVerdict = "submit_verdict"
)

type schema = map[string]any

func object(props schema, required ...string) schema {
	s := schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func prop(typ, desc string) schema { return schema{"type": typ, "description": desc} }

func function(name, desc string, params schema) openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: name, Description: desc, Parameters: params,
	}}
}

// submitVerdictTool describes submit_verdict.
func submitVerdictTool() openai.Tool {
	evidence := object(schema{
		"kind": schema{"type": "string", "enum": []string{CheckFileExists, CheckContentContains, CheckToolFact},
			"description": "file_exists: path exists; content_contains: match appears in path within start_line..end_line; tool_fact: match appeared in a tool result of this investigation"},
		"path":       prop("string", "repository-relative file (file_exists, content_contains)"),
		"start_line": prop("integer", "first line of the range (content_contains; omit for the whole file)"),
		"end_line":   prop("integer", "last line of the range (content_contains)"),
		"match":      prop("string", "exact text to find, whitespace-insensitive (content_contains, tool_fact)"),
		"required":   prop("boolean", "whether the verdict stands or falls with this item (default true)"),
	}, "kind")
	return function(toolSubmitVerdict,
		"Finish the investigation with a verdict on the finding. The evidence is checked by the runtime.",
		object(schema{
			"verdict":    schema{"type": "string", "enum": []string{"confirmed", "refuted", "inconclusive"}},
			"confidence": prop("number", "how likely the finding is a real defect, 0 to 1 (low for refuted)"),
			"reasoning":  prop("string", "why the evidence supports the verdict"),
			"evidence":   schema{"type": "array", "items": evidence, "description": "facts supporting the verdict; a confirmed verdict needs at least one required item"},
		}, "verdict", "confidence", "reasoning", "evidence"))
}

// ToolDefinitions returns the tools offered to the model: read_file, grep,
// list_dir, find_symbol and submit_verdict, with JSON schemas of their
// arguments.
func ToolDefinitions() []openai.Tool {
	return []openai.Tool{
		function(toolReadFile, "Read numbered lines of a file in the repository.",
			object(schema{
				"path":       prop("string", "repository-relative file path"),
				"start_line": prop("integer", "first line, 1-based (default 1)"),
				"end_line":   prop("integer", "last line, inclusive (default: as far as the per-call line limit allows)"),
			}, "path")),
		function(toolGrep, "Search file contents with an RE2 regular expression. Skips dependency, build and cache directories and binary files.",
			object(schema{
				"pattern":   prop("string", "RE2 regular expression matched against each line"),
				"path_glob": prop("string", "files to search, e.g. **/*.go or src/api (default: all files)"),
			}, "pattern")),
		function(toolListDir, "List the entries of a directory in the repository.",
			object(schema{
				"path": prop("string", "repository-relative directory (default: the root)"),
			})),
		function(toolFindSymbol, "Find where a function, method, type, class or constant is defined (Go, Python, JavaScript/TypeScript, Java/Kotlin, Ruby).",
			object(schema{
				"name": prop("string", "identifier, optionally qualified as Type.method"),
			}, "name")),
		submitVerdictTool(),
	}
}
