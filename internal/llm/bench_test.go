package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchReply is a prose-wrapped, fenced reply with 20 findings.
func benchReply() string {
	var items []string
	for i := range 20 {
		items = append(items, fmt.Sprintf(`{"risk_type": "robustness", "line_start": %d, "confidence": 0.%d}`, i+1, i%10))
	}
	return "Here are the findings:\n```json\n{\"findings\": [" + strings.Join(items, ",\n") + "]}\n```\nDone."
}

func BenchmarkExtractAndValidate(b *testing.B) {
	reply := benchReply()
	schema := json.RawMessage(findingsSchema)
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		doc, err := ExtractJSON(reply)
		if err != nil {
			b.Fatal(err)
		}
		if err := ValidateJSON(schema, doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateCompiled(b *testing.B) {
	doc, err := ExtractJSON(benchReply())
	if err != nil {
		b.Fatal(err)
	}
	s, err := compileSchema(json.RawMessage(findingsSchema))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.validateDoc(doc); err != nil {
			b.Fatal(err)
		}
	}
}
