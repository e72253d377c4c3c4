package llmparts

import "testing"

// TestCanonical checks the form parts are stored and hashed in: keys
// sorted at every depth, no whitespace, numbers as written.
func TestCanonical(t *testing.T) {
	t.Parallel()
	got, err := Canonical([]byte(`{ "b": [ {"z": 1.50, "a": 1e400} ], "a": "x<y" }`))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"a":"x\u003cy","b":[{"a":1e400,"z":1.50}]}`
	if string(got) != want {
		t.Errorf("Canonical = %s, want %s", got, want)
	}
	if _, err := Canonical([]byte(`{"a":`)); err == nil {
		t.Error("truncated JSON was accepted")
	}
}

// TestSplit checks that a request body is cut into its messages, in
// order, and the rest; equal messages hash equally whatever their spacing.
func TestSplit(t *testing.T) {
	t.Parallel()
	req, err := Split([]byte(`{"model":"m","temperature":0.2,"messages":[{"role":"user","content":"hi"},{"content":"hi", "role":"user"},{"role":"assistant","content":"ok"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) != 3 || req.Messages[0].Hash != req.Messages[1].Hash || req.Messages[0].Hash == req.Messages[2].Hash {
		t.Fatalf("messages = %+v", req.Messages)
	}
	if string(req.Messages[2].Body) != `{"content":"ok","role":"assistant"}` || req.Messages[2].Kind != KindMessage {
		t.Errorf("third message = %s (%s)", req.Messages[2].Body, req.Messages[2].Kind)
	}
	if string(req.Params.Body) != `{"model":"m","temperature":0.2}` || req.Params.Kind != KindParams || req.Params.Hash != Hash(req.Params.Body) {
		t.Errorf("params = %+v", req.Params)
	}
	for _, bad := range []string{`[1]`, `{"messages":{"role":"user"}}`, `{"messages":[{"role":]}`} {
		if _, err := Split([]byte(bad)); err == nil {
			t.Errorf("Split(%s) gave no error", bad)
		}
	}
}
