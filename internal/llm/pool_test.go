package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/llmfake"
)

// newPool builds a client over the given fake servers; the harness's
// server is the first endpoint.
func newPool(t *testing.T, weights []int, handlers ...llmfake.Handler) (*harness, []*llmfake.Server) {
	t.Helper()
	var servers []*llmfake.Server
	var eps []Endpoint
	for i, h := range handlers {
		srv := llmfake.New(h)
		t.Cleanup(srv.Close)
		servers = append(servers, srv)
		eps = append(eps, Endpoint{Name: string(rune('a' + i)), BaseURL: srv.URL, APIKey: "k", Weight: weights[i],
			Models: map[string]string{"test-model": "model-" + string(rune('a'+i))}})
	}
	h := newHarness(t, handlers[0], Config{}, WithEndpoints(eps...))
	return h, servers
}

func TestPoolSpreadsByWeightAndMapsModels(t *testing.T) {
	t.Parallel()
	ok := llmfake.Static(llmfake.Text("ok"))
	h, servers := newPool(t, []int{3, 1}, ok, ok)
	for range 200 {
		if _, err := h.client.Chat(context.Background(), testMeta, chatReq("hi")); err != nil {
			t.Fatal(err)
		}
	}
	a, b := len(servers[0].Requests()), len(servers[1].Requests())
	if a+b != 200 || b == 0 || a <= b {
		t.Errorf("calls a=%d b=%d, want about 3:1", a, b)
	}
	if m := servers[1].Requests()[0].Model; m != "model-b" {
		t.Errorf("endpoint b got model %q, want its mapping model-b", m)
	}
	names := map[string]int{}
	for _, r := range h.rec.all() {
		names[r.Endpoint]++
	}
	if names["a"] != a || names["b"] != b {
		t.Errorf("records by endpoint = %v, want a=%d b=%d", names, a, b)
	}
}

func TestPoolTakesOutAnEndpointRefusingTheKey(t *testing.T) {
	t.Parallel()
	refuse := llmfake.Static(llmfake.Fail(401, "invalid api key"))
	h, servers := newPool(t, []int{1, 1}, refuse, llmfake.Static(llmfake.Text("ok")))
	for range 20 {
		if _, err := h.client.Chat(context.Background(), testMeta, chatReq("hi")); err != nil {
			t.Fatalf("a call failed although endpoint b answers: %v", err)
		}
	}
	if n := len(servers[0].Requests()); n > 1 {
		t.Errorf("the refusing endpoint got %d calls, want at most the first", n)
	}
}

func TestPoolAllEndpointsCoolingDownIsPermanent(t *testing.T) {
	t.Parallel()
	refuse := llmfake.Static(llmfake.Fail(403, "forbidden"))
	h, _ := newPool(t, []int{1, 1}, refuse, refuse)
	_, err := h.client.Chat(context.Background(), testMeta, chatReq("hi"))
	if err == nil || !IsPermanent(err) {
		t.Fatalf("err = %v, want permanent", err)
	}
	_, err = h.client.Chat(context.Background(), testMeta, chatReq("hi"))
	var cd *CoolDownError
	if !errors.As(err, &cd) || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("next call = %v, want a cool-down naming the provider's answer", err)
	}
}
