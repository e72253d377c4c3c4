package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/google/uuid"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/demo"
	"github.com/reviewfleet/reviewfleet/internal/llmfake"
	"github.com/reviewfleet/reviewfleet/internal/replay"
	"github.com/reviewfleet/reviewfleet/internal/submit"
	"github.com/reviewfleet/reviewfleet/store"
)

// replayRun is a review played back from a recording: `review --replay`
// and the demo. Its server answers the in-process worker's model calls.
type replayRun struct {
	srv *replay.Server
	// live, in the demo when demoLive is set, answers with the demo's
	// rule-based exchange instead, to record it again.
	live   *llmfake.Server
	sample demo.Repo
	// rec is the recording; nil until submit loads it from the database
	// (--replay REVIEW_ID).
	rec *replay.Recording
	// reviewID is the recorded review to load.
	reviewID string
	// snapshot, when set, replaces the recorded work tree (the demo
	// writes its sample repository afresh on every run).
	snapshot string
}

// startReplay starts the replay server for from: a recording file, or the
// ID of a review recorded in the database.
func startReplay(from string) (*replayRun, error) {
	r := &replayRun{}
	if st, err := os.Stat(from); err == nil && !st.IsDir() {
		rec, err := replay.ReadFile(from)
		if err != nil {
			return nil, err
		}
		r.rec = &rec
	} else if _, perr := uuid.Parse(from); perr == nil {
		r.reviewID = from
	} else {
		return nil, exitError{code: exitUsage, err: fmt.Errorf("--replay %s: neither a recording file nor a review ID", from)}
	}
	srv, err := replay.NewServer()
	if err != nil {
		return nil, err
	}
	r.srv = srv
	return r, nil
}

// demoLive makes `review --demo` answer with the demo's rule-based exchange
// and record it, instead of playing back the bundled recording: the test
// that regenerates internal/demo/recording.json sets it.
var demoLive bool

// demoRun plays the bundled recording back against the sample repository
// written to sample.Dir.
func demoRun(sample demo.Repo) (*replayRun, func(*config.Config), error) {
	r := &replayRun{snapshot: sample.Dir, sample: sample}
	if demoLive {
		r.live = demo.NewServer()
		return r, r.edit, nil
	}
	rec, err := demo.Recording()
	if err != nil {
		return nil, nil, err
	}
	r.rec = &rec
	if r.srv, err = replay.NewServer(); err != nil {
		return nil, nil, err
	}
	return r, r.edit, nil
}

// Close stops the server.
func (r *replayRun) Close() {
	if r.live != nil {
		r.live.Close()
		return
	}
	r.srv.Close()
}

// misses delivers the first request the recording has no reply for (never,
// for a live demo or without a replay).
func (r *replayRun) misses() <-chan error {
	if r == nil || r.srv == nil {
		return nil
	}
	return r.srv.Misses()
}

// edit points the LLM client at the replay server. The server lives in
// this process: so must the queue and the worker, whatever REDIS_URL says.
func (r *replayRun) edit(c *config.Config) {
	if r.live != nil {
		c.LLM.BaseURL, c.LLM.APIKey, c.LLM.Model, c.LLM.Recorded = r.live.URL, "recorded", demo.Model, true
		c.LLM.IntentModel, c.LLM.VerifyModel, c.LLM.ExpertModel, c.LLM.EvalModel = "", "", "", ""
		c.RedisURL = ""
		return
	}
	c.LLM.BaseURL, c.LLM.APIKey, c.LLM.Recorded = r.srv.URL, "recorded", true
	c.LLM.Endpoints = []config.Endpoint{}
	// No provider is called: its quotas do not apply.
	c.LLM.RequestsPerMinute, c.LLM.TokensPerMinute, c.LLM.FleetRequestsPerMinute, c.LLM.FleetTokensPerMinute = 0, 0, 0, 0
	if c.LLM.Model == "" {
		c.LLM.Model = "recorded" // the recorded review's configuration names its models
	}
	c.RedisURL = ""
}

// submit stores the recorded review again, with the recorded files,
// items, snapshot and configuration, and hands its replies to the server.
func (r *replayRun) submit(ctx context.Context, st *store.Store, sub *app.Submission) (string, error) {
	if r.live != nil {
		nr, err := sub.Prepare(ctx, submit.Request{Origin: submit.FromOperator, Repo: r.sample.Dir, Base: r.sample.Base, Head: r.sample.Head})
		if err != nil {
			return "", err
		}
		// A fixed name, not the temporary directory: prompts quote it.
		nr.Repo, nr.DedupeKey = demo.RepoName, ""
		return sub.Create(ctx, nr)
	}
	if r.rec == nil {
		rec, err := replay.Load(ctx, st, r.reviewID)
		if err != nil {
			return "", err
		}
		r.rec = &rec
	}
	if len(r.rec.Exchanges) == 0 && len(r.rec.Review.Items) > 0 {
		return "", errors.New("replay: the recording holds no model replies")
	}
	r.srv.Play(*r.rec)
	nr, err := r.rec.NewReview()
	if err != nil {
		return "", err
	}
	if r.snapshot != "" {
		nr.Snapshot = r.snapshot
	}
	return sub.Create(ctx, nr)
}
