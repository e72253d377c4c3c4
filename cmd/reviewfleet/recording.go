package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/reviewfleet/reviewfleet/internal/app"
	"github.com/reviewfleet/reviewfleet/internal/replay"
)

const recordingUsage = `Usage: reviewfleet recording export REVIEW_ID > rec.json

Writes a review's recording as JSON: what it reviewed (files, items,
snapshot, configuration) and every model reply, by request hash. Replay it
with 'reviewfleet review --replay rec.json'. The review must have run with
llm.record_exchanges on (the default).
`

func cmdRecording(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("recording", stderr)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 || pos[0] != "export" {
		fs.Usage()
		return exitError{code: exitUsage, err: errors.New("want: recording export REVIEW_ID")}
	}
	a, closeApp, err := open(ctx, *cfgPath, stderr, app.Options{SkipLLM: true, NoStartLocal: true}, nil)
	if err != nil {
		return err
	}
	defer closeApp()
	rec, err := replay.Load(ctx, a.Store, pos[1])
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", " ")
	return enc.Encode(rec)
}
