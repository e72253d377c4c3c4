package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// eventInterval is how often a batch's progress is sent; eventLifetime
// ends a stream so a forgotten tab does not hold a connection for ever
// (EventSource reconnects by itself).
var (
	eventInterval = 2 * time.Second
	eventLifetime = 10 * time.Minute
)

// liveProgress is what a progress event carries: the numbers the batch
// page shows, by the names of their elements' data-live attributes.
type liveProgress struct {
	Reviews int    `json:"reviews"`
	Queued  int    `json:"queued"`
	Running int    `json:"running"`
	Done    int    `json:"done"`
	Failed  int    `json:"failed"`
	Ended   int    `json:"ended"`
	Percent int    `json:"percent"`
	Cost    string `json:"cost"`
	ETA     string `json:"eta"`
	Status  string `json:"status"`
}

// batchEvents streams a batch's progress as server-sent events until the
// batch ends, the client goes or the stream's lifetime is over.
func (c *Console) batchEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !validID(id) {
		http.Error(w, "no such batch", http.StatusNotFound)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	ctx := r.Context()
	end := time.NewTimer(eventLifetime)
	defer end.Stop()
	tick := time.NewTicker(eventInterval)
	defer tick.Stop()
	for {
		qctx, cancel := c.queryCtx(r)
		b, err := c.getBatch(qctx, id)
		cancel()
		if err != nil {
			fmt.Fprintf(w, "event: gone\ndata: {}\n\n")
			flusher.Flush()
			return
		}
		p := b.P
		ev := liveProgress{Reviews: p.Reviews, Queued: p.Queued, Running: p.Running, Done: p.Done, Failed: p.Failed,
			Ended: p.Ended(), Percent: p.Percent(), Cost: fmtUSD(p.Cost), ETA: "—", Status: b.Status}
		if p.ETA != nil {
			ev.ETA = p.ETA.UTC().Format("2006-01-02 15:04:05")
		}
		data, _ := json.Marshal(ev)
		_ = rc.SetWriteDeadline(time.Now().Add(eventInterval + 10*time.Second))
		if _, err := fmt.Fprintf(w, "event: progress\ndata: %s\n\n", data); err != nil {
			return
		}
		flusher.Flush()
		if p.Queued+p.Running == 0 && p.Reviews > 0 {
			fmt.Fprintf(w, "event: ended\ndata: {}\n\n")
			flusher.Flush()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-end.C:
			return
		case <-tick.C:
		}
	}
}
