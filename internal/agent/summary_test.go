package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/prompts"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// expertSchema returns the expert stage's output schema as shipped.
func expertSchema(t *testing.T) json.RawMessage {
	t.Helper()
	set, err := prompts.Load("")
	if err != nil {
		t.Fatalf("load prompts: %v", err)
	}
	raw := set.Schema(review.StageExpert)
	if raw == nil {
		t.Fatal("no expert schema")
	}
	return raw
}

// compactJSON returns raw without insignificant white space.
func compactJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("compact %s: %v", raw, err)
	}
	return b.String()
}

// checkSummaryFormat checks, on the request bodies as sent, that the first
// budget requests carry no response_format and the rest carry the strict
// json_schema format with the given name and schema, or none when schema
// is nil.
func checkSummaryFormat(t *testing.T, llm *fakeLLM, budget int, name string, schema []byte) {
	t.Helper()
	for i, raw := range llm.rawRequests(t) {
		if i < budget || schema == nil {
			if raw.ResponseFormat != nil {
				t.Errorf("request %d carries response_format %s, want none", i+1, raw.ResponseFormat)
			}
			continue
		}
		if raw.ResponseFormat == nil {
			t.Errorf("request %d carries no response_format, want the summary schema", i+1)
			continue
		}
		var rf struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Strict bool            `json:"strict"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		}
		if err := json.Unmarshal(raw.ResponseFormat, &rf); err != nil {
			t.Fatalf("request %d: response_format %s: %v", i+1, raw.ResponseFormat, err)
		}
		if rf.Type != "json_schema" || rf.JSONSchema.Name != name || !rf.JSONSchema.Strict {
			t.Errorf("request %d: response_format %s, want strict json_schema named %q", i+1, raw.ResponseFormat, name)
		}
		if rf.JSONSchema.Schema == nil || compactJSON(t, rf.JSONSchema.Schema) != compactJSON(t, schema) {
			t.Errorf("request %d sends schema %s, want the summary schema", i+1, rf.JSONSchema.Schema)
		}
	}
}

// strictConfirm is confirmArgs as a strict structured reply writes it:
// every field present, 0 and "" for the unused ones.
func strictConfirm() map[string]any {
	args := confirmArgs()
	args["evidence"] = []map[string]any{
		{"kind": "file_exists", "path": "internal/auth/session.go", "start_line": 0, "end_line": 0, "match": "", "required": true},
		{"kind": "content_contains", "path": "internal/auth/session.go", "start_line": 16, "end_line": 0,
			"match": "sess := s.Lookup(id)", "required": true},
		{"kind": "tool_fact", "path": "", "start_line": 0, "end_line": 0, "match": "sess := s.byID[id]", "required": true},
	}
	return args
}

func TestRunForcedRoundsAskForSummarySchema(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	schema := expertSchema(t)
	llm := newFakeLLM(t, llmfake.Script(
		llmfake.Tools(llmfake.ToolCall("read_file", map[string]any{"path": "internal/auth/session.go"})),
		llmfake.Tools(llmfake.ToolCall("list_dir", map[string]any{"path": "internal/auth"})),
		llmfake.Text(`{"reasoning": "cut short`),
		llmfake.JSON(strictConfirm()),
	))
	cfg := fastConfig()
	cfg.MaxRounds = 2
	cfg.GracefulExitRounds = 3
	cfg.SummarySchema = schema
	cfg.SummarySchemaName = "reviewfleet_expert"
	res, err := Run(context.Background(), llm.model(), sampleTask(root), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopAccepted || res.Rounds != 4 {
		t.Fatalf("stop %s after %d rounds, want accepted in round 4; checks %+v", res.StopReason, res.Rounds, res.CheckResults)
	}
	if res.Verdict != review.VerdictConfirmed || res.Confidence != 0.9 || len(res.CheckResults) != 3 {
		t.Errorf("verdict %s %.2f with %d checks, want the structured reply's verdict", res.Verdict, res.Confidence, len(res.CheckResults))
	}
	checkSummaryFormat(t, llm, 2, "reviewfleet_expert", schema)
}

func TestRunSummarySchemaDefaultName(t *testing.T) {
	t.Parallel()
	root := sampleRepo(t)
	schema := json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string"}},"required":["verdict"],"additionalProperties":false}`)
	llm := newFakeLLM(t, llmfake.Script(
		llmfake.Tools(llmfake.ToolCall("list_dir", map[string]any{})),
		llmfake.JSON(strictConfirm()),
	))
	cfg := fastConfig()
	cfg.MaxRounds = 1
	cfg.SummarySchema = schema
	res, err := Run(context.Background(), llm.model(), sampleTask(root), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Rounds != 2 {
		t.Fatalf("run ended after %d rounds, want 2", res.Rounds)
	}
	checkSummaryFormat(t, llm, 1, DefaultSummarySchemaName, schema)
}

func TestRunRejectsBadSummarySchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schema, schemaName, want string
	}{
		{"not json", `{"type":`, "", "not a JSON object"},
		{"not an object", `["verdict"]`, "", "not a JSON object"},
		{"bad name", `{"type":"object"}`, "expert verdict", `character ' '`},
		{"long name", `{"type":"object"}`, strings.Repeat("x", 65), "1 to 64 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			llm := newFakeLLM(t, llmfake.Script())
			cfg := fastConfig()
			cfg.SummarySchema = json.RawMessage(tt.schema)
			cfg.SummarySchemaName = tt.schemaName
			res, err := Run(context.Background(), llm.model(), sampleTask(sampleRepo(t)), cfg)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.StopReason != StopError || res.Err == nil || !strings.Contains(res.Error, tt.want) {
				t.Fatalf("stop %s error %q (%v), want an error mentioning %q", res.StopReason, res.Error, res.Err, tt.want)
			}
			if len(llm.requests()) != 0 {
				t.Error("the model was called despite the bad schema")
			}
		})
	}
}

// schemaNode is the part of a JSON schema node the shape comparison reads.
type schemaNode struct {
	Type       string                `json:"type"`
	Enum       []string              `json:"enum"`
	Properties map[string]schemaNode `json:"properties"`
	Items      *schemaNode           `json:"items"`
}

// shape flattens a schema into "path type enum" lines, sorted.
func (n schemaNode) shape(at string, out []string) []string {
	out = append(out, at+" "+n.Type+" "+strings.Join(n.Enum, "|"))
	for name, p := range n.Properties {
		out = p.shape(at+"."+name, out)
	}
	if n.Items != nil {
		out = n.Items.shape(at+"[]", out)
	}
	return out
}

// The shipped expert schema describes exactly the submit_verdict
// arguments, so a structured reply in it is a verdict the runtime reads.
func TestExpertSchemaMatchesSubmitVerdict(t *testing.T) {
	t.Parallel()
	var schema, params schemaNode
	if err := json.Unmarshal(expertSchema(t), &schema); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(mustJSON(t, submitVerdictTool().Function.Parameters)), &params); err != nil {
		t.Fatal(err)
	}
	got, want := schema.shape("root", nil), params.shape("root", nil)
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("expert schema shape:\n%s\nsubmit_verdict shape:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(want) != 12 {
		t.Errorf("submit_verdict shape has %d nodes, want 12 (the root, 4 fields, the item and its 6 fields)", len(want))
	}
}

// A strict reply, with 0 and "" in the fields its kinds do not use,
// validates like the submit_verdict arguments it mirrors.
func TestStrictReplyValidates(t *testing.T) {
	t.Parallel()
	sub, err := parseVerdict(mustJSON(t, strictConfirm()))
	if err != nil {
		t.Fatalf("strict reply rejected: %v", err)
	}
	if len(sub.evidence) != 3 || sub.evidence[1].StartLine != 16 || sub.evidence[1].EndLine != 0 || !sub.evidence[2].Required {
		t.Errorf("evidence = %+v", sub.evidence)
	}
}
