package webhook_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/webhook"
)

// slowSender opens a raw connection to addr, sends a forged delivery's
// headers and then trickles its body a byte at a time, as an attacker
// holding a read slot would. held receives how long after the headers the
// server answered or closed the connection.
func slowSender(t *testing.T, addr string, chunked bool, held chan<- time.Duration) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	framing := "Content-Length: 1000\r\n"
	if chunked {
		framing = "Transfer-Encoding: chunked\r\n"
	}
	head := "POST /webhook HTTP/1.1\r\nHost: fleet\r\nX-GitHub-Event: pull_request\r\nX-GitHub-Delivery: slow\r\n" +
		"X-Hub-Signature-256: sha256=" + strings.Repeat("00", 32) + "\r\n" + framing + "\r\n"
	start := time.Now()
	if _, err := c.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	byteOf := func() []byte {
		if chunked {
			return []byte("1\r\nx\r\n")
		}
		return []byte("x")
	}
	go func() {
		defer c.Close()
		done := make(chan struct{})
		go func() {
			defer close(done)
			// The answer, or the connection closing, ends the slot.
			_, _ = bufio.NewReader(c).ReadString('\n')
			held <- time.Since(start)
		}()
		for {
			if _, err := c.Write(byteOf()); err != nil {
				<-done
				return
			}
			select {
			case <-done:
				return
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
}

// Four senders trickling forged bodies take every read slot, and lose
// them about BodyGrace later: a real delivery arriving meanwhile waits
// for a slot and is served, where it used to be answered 503 while the
// senders held the slots until the server's read timeout.
func TestSlowBodiesLoseTheirSlots(t *testing.T) {
	t.Parallel()
	h := &webhook.Handler{Secret: secret}
	srv := httptest.NewUnstartedServer(h)
	// As serve runs it.
	srv.Config.ReadHeaderTimeout, srv.Config.ReadTimeout, srv.Config.WriteTimeout = 5*time.Second, 8*time.Second, 9*time.Second
	srv.Start()
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	held := make(chan time.Duration, webhook.DefaultReadConcurrency)
	for i := range webhook.DefaultReadConcurrency {
		slowSender(t, addr, i%2 == 1, held)
	}
	time.Sleep(200 * time.Millisecond) // every slot taken

	body := []byte(`{"zen": "Keep it logically awesome."}`)
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/webhook", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-GitHub-Event", "ping")
	req.Header.Set("X-GitHub-Delivery", "real")
	req.Header.Set("X-Hub-Signature-256", sign(body))
	start := time.Now()
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waited := time.Since(start)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a real delivery while four slow senders are connected: %d after %s, want 200", resp.StatusCode, waited)
	}
	var worst time.Duration
	for range webhook.DefaultReadConcurrency {
		select {
		case d := <-held:
			worst = max(worst, d)
		case <-time.After(10 * time.Second):
			t.Fatal("a slow sender still holds its slot after 10 s")
		}
	}
	t.Logf("slow senders held their slots for at most %s; the real delivery waited %s", worst.Round(time.Millisecond), waited.Round(time.Millisecond))
	if limit := webhook.DefaultBodyGrace + time.Second; worst > limit {
		t.Fatalf("a slow sender held its slot %s, want at most %s", worst, limit)
	}
}

// The pace asked of a body is no obstacle to a real one: a large signed
// body sent at once is read whole.
func TestLargeBodyAtSpeedIsRead(t *testing.T) {
	t.Parallel()
	h := &webhook.Handler{Secret: secret, BodyGrace: 200 * time.Millisecond}
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := []byte(fmt.Sprintf(`{"zen": %q}`, strings.Repeat("x", 8<<20)))
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/webhook", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-GitHub-Event", "ping")
	req.Header.Set("X-Hub-Signature-256", sign(body))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("8 MiB sent at once: %d, want 200", resp.StatusCode)
	}
}
