package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

const findingsSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["findings"],
  "properties": {
    "findings": {
      "type": "array",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["risk_type", "line_start", "confidence"],
        "properties": {
          "risk_type": {"type": "string", "enum": ["robustness", "concurrency"]},
          "line_start": {"type": "integer", "minimum": 1},
          "confidence": {"type": "number", "minimum": 0, "maximum": 1}
        }
      }
    }
  }
}`

type findingsOut struct {
	Findings []struct {
		RiskType   string  `json:"risk_type"`
		LineStart  int     `json:"line_start"`
		Confidence float64 `json:"confidence"`
	} `json:"findings"`
}

const goodFindings = `{"findings": [{"risk_type": "concurrency", "line_start": 12, "confidence": 0.8}]}`

func structuredReq() StructuredRequest {
	return StructuredRequest{
		System:      "You review code.",
		User:        "Review this diff.",
		SchemaName:  "reviewfleet_intent",
		Schema:      json.RawMessage(findingsSchema),
		MaxTokens:   512,
		Temperature: 0.1,
	}
}

func TestStructuredHappyPath(t *testing.T) {
	t.Parallel()
	h := newHarness(t, llmfake.Script(llmfake.Reply{Content: goodFindings, PromptTokens: 40, CompletionTokens: 9}), Config{})
	var out findingsOut
	usage, err := h.client.Structured(context.Background(), testMeta, structuredReq(), &out)
	if err != nil {
		t.Fatalf("Structured: %v", err)
	}
	if len(out.Findings) != 1 || out.Findings[0].LineStart != 12 || out.Findings[0].RiskType != "concurrency" {
		t.Errorf("decoded %+v", out)
	}
	if usage.Calls != 1 || usage.PromptTokens != 40 || usage.CompletionTokens != 9 {
		t.Errorf("usage = %+v, want 1 call, 40 in, 9 out", usage)
	}

	reqs := h.server.Requests()
	if len(reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(reqs))
	}
	req := reqs[0]
	if req.Model != "test-model" {
		t.Errorf("model = %q", req.Model)
	}
	rf := req.ResponseFormat
	if rf == nil || rf.Type != openai.ChatCompletionResponseFormatTypeJSONSchema || rf.JSONSchema == nil {
		t.Fatalf("response_format = %+v, want json_schema", rf)
	}
	if rf.JSONSchema.Name != "reviewfleet_intent" || !rf.JSONSchema.Strict {
		t.Errorf("json_schema name=%q strict=%v", rf.JSONSchema.Name, rf.JSONSchema.Strict)
	}
	sent, err := rf.JSONSchema.Schema.MarshalJSON()
	if err != nil || !strings.Contains(string(sent), `"line_start"`) {
		t.Errorf("schema sent = %s (%v)", sent, err)
	}
	//lint:ignore SA1019 the client sends max_tokens to non-reasoning models
	if req.MaxTokens != 512 || len(req.Messages) != 2 || req.Messages[0].Role != "system" {
		//lint:ignore SA1019 as above
		t.Errorf("max_tokens=%d messages=%+v", req.MaxTokens, req.Messages)
	}

	recs := h.rec.all()
	if len(recs) != 1 || recs[0].Status != StatusOK {
		t.Fatalf("records = %+v", recs)
	}
	r := recs[0]
	if r.ReviewID != "rev-1" || r.Stage != "intent" || r.ItemKey != "file:main.go" || r.Model != "test-model" {
		t.Errorf("record identity = %+v", r)
	}
	if len(r.PromptHash) != 64 || r.TokensIn != 40 || r.TokensOut != 9 {
		t.Errorf("record hash=%q tokens=%d/%d", r.PromptHash, r.TokensIn, r.TokensOut)
	}
	if r.Request == nil || !strings.Contains(string(r.Request.Params.Body), "reviewfleet_intent") || !strings.Contains(string(r.Response), "concurrency") {
		t.Errorf("record bodies missing content: req=%+v resp=%s", r.Request, r.Response)
	}
}

func TestStructuredTolerantReplies(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"fenced":         "```json\n" + goodFindings + "\n```",
		"prose around":   "Here is my analysis:\n" + goodFindings + "\nLet me know if you need more.",
		"trailing comma": `{"findings": [{"risk_type": "concurrency", "line_start": 12, "confidence": 0.8,},],}`,
		"bare fence":     "```\n" + goodFindings + "\n```",
	}
	for name, reply := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, llmfake.Script(llmfake.Text(reply)), Config{})
			var out findingsOut
			usage, err := h.client.Structured(context.Background(), testMeta, structuredReq(), &out)
			if err != nil {
				t.Fatalf("Structured: %v", err)
			}
			if usage.Calls != 1 || len(out.Findings) != 1 || out.Findings[0].Confidence != 0.8 {
				t.Errorf("usage=%+v out=%+v", usage, out)
			}
		})
	}
}

func TestStructuredRepairSucceeds(t *testing.T) {
	t.Parallel()
	bad := `{"findings": [{"risk_type": "concurrency", "line_start": "twelve", "confidence": 0.8}]}`
	h := newHarness(t, llmfake.Script(
		llmfake.Reply{Content: bad, PromptTokens: 10, CompletionTokens: 5},
		llmfake.Reply{Content: goodFindings, PromptTokens: 30, CompletionTokens: 6},
	), Config{})
	var out findingsOut
	usage, err := h.client.Structured(context.Background(), testMeta, structuredReq(), &out)
	if err != nil {
		t.Fatalf("Structured: %v", err)
	}
	if len(out.Findings) != 1 || out.Findings[0].LineStart != 12 {
		t.Errorf("decoded %+v", out)
	}
	if usage.Calls != 2 || usage.PromptTokens != 40 || usage.CompletionTokens != 11 {
		t.Errorf("usage = %+v, want both attempts summed", usage)
	}
	if got := h.rec.statuses(); strings.Join(got, ",") != "invalid_reply,ok" {
		t.Errorf("record statuses = %v", got)
	}
	reqs := h.server.Requests()
	if len(reqs) != 2 {
		t.Fatalf("server got %d requests, want 2", len(reqs))
	}
	msgs := reqs[1].Messages
	if len(msgs) != 4 || msgs[2].Role != "assistant" || msgs[2].Content != bad {
		t.Fatalf("repair messages = %+v", msgs)
	}
	if !strings.Contains(msgs[3].Content, "$.findings[0].line_start: got string, want integer") {
		t.Errorf("repair prompt lacks the validation error: %q", msgs[3].Content)
	}
	if reqs[1].ResponseFormat == nil || reqs[1].ResponseFormat.JSONSchema == nil {
		t.Errorf("repair request lost the response format")
	}
}

func TestStructuredInvalidTwice(t *testing.T) {
	t.Parallel()
	h := newHarness(t, llmfake.Script(llmfake.Text("I cannot help with that."), llmfake.Text(`{"findings": "none"}`)), Config{})
	var out findingsOut
	out.Findings = make([]struct {
		RiskType   string  `json:"risk_type"`
		LineStart  int     `json:"line_start"`
		Confidence float64 `json:"confidence"`
	}, 1)
	out.Findings[0].LineStart = 99
	usage, err := h.client.Structured(context.Background(), testMeta, structuredReq(), &out)
	var inv *InvalidReplyError
	if !errors.As(err, &inv) {
		t.Fatalf("err = %v, want InvalidReplyError", err)
	}
	if inv.Raw != `{"findings": "none"}` || !strings.Contains(inv.Reason, "$.findings: got string, want array") {
		t.Errorf("InvalidReplyError = %+v", inv)
	}
	if !IsPermanent(err) {
		t.Errorf("IsPermanent(%v) = false", err)
	}
	if usage.Calls != 2 || len(h.server.Requests()) != 2 {
		t.Errorf("usage.Calls = %d, requests = %d, want 2", usage.Calls, len(h.server.Requests()))
	}
	if got := h.rec.statuses(); strings.Join(got, ",") != "invalid_reply,invalid_reply" {
		t.Errorf("record statuses = %v", got)
	}
	if len(out.Findings) != 1 || out.Findings[0].LineStart != 99 {
		t.Errorf("out was written although no reply was accepted: %+v", out)
	}
}

func TestStructuredRejectsBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t, llmfake.Script(), Config{})
	var out findingsOut
	cases := map[string]struct {
		mutate func(*StructuredRequest)
		out    any
	}{
		"nil out":          {func(*StructuredRequest) {}, nil},
		"non-pointer out":  {func(*StructuredRequest) {}, out},
		"bad schema name":  {func(r *StructuredRequest) { r.SchemaName = "has space" }, &out},
		"schema not JSON":  {func(r *StructuredRequest) { r.Schema = json.RawMessage(`{`) }, &out},
		"unsupported ref":  {func(r *StructuredRequest) { r.Schema = json.RawMessage(`{"$ref": "#/x"}`) }, &out},
		"empty user":       {func(r *StructuredRequest) { r.User = " " }, &out},
		"schema bad types": {func(r *StructuredRequest) { r.Schema = json.RawMessage(`{"type": "text"}`) }, &out},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := structuredReq()
			tc.mutate(&req)
			_, err := h.client.Structured(context.Background(), testMeta, req, tc.out)
			if !errors.Is(err, ErrInvalidRequest) || !IsPermanent(err) {
				t.Errorf("err = %v, want ErrInvalidRequest", err)
			}
		})
	}
	if n := len(h.server.Requests()); n != 0 {
		t.Errorf("server got %d requests for invalid input", n)
	}
}

func TestStructuredReasoningModelUsesMaxCompletionTokens(t *testing.T) {
	t.Parallel()
	h := newHarness(t, llmfake.Script(llmfake.Text(goodFindings)), Config{})
	meta := testMeta
	meta.Model = "o3-mini"
	var out findingsOut
	if _, err := h.client.Structured(context.Background(), meta, structuredReq(), &out); err != nil {
		t.Fatalf("Structured: %v", err)
	}
	req := h.server.Requests()[0]
	//lint:ignore SA1019 checking that max_tokens is left unset
	if req.MaxCompletionTokens != 512 || req.MaxTokens != 0 || req.Temperature != 0 {
		//lint:ignore SA1019 as above
		t.Errorf("max_completion_tokens=%d max_tokens=%d temperature=%v", req.MaxCompletionTokens, req.MaxTokens, req.Temperature)
	}
}
