package metrics

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestOutcomesCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewOutcomesCollector(func(context.Context) (map[string]int64, error) {
		return map[string]int64{"resolved": 7, "dismissed": 2, "acknowledged": 0, "open": 11}, nil
	}, nil))
	families, err := reg.Gather()
	if err != nil || len(families) != 1 || families[0].GetName() != "reviewfleet_finding_outcomes" {
		t.Fatalf("gathered %v, %v", families, err)
	}
	got := map[string]float64{}
	for _, m := range families[0].GetMetric() {
		got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	if len(got) != 4 || got["resolved"] != 7 || got["dismissed"] != 2 || got["open"] != 11 || got["acknowledged"] != 0 {
		t.Fatalf("gauges %v", got)
	}
	failing := prometheus.NewRegistry()
	failing.MustRegister(NewOutcomesCollector(func(context.Context) (map[string]int64, error) { return nil, errors.New("db away") }, nil))
	if _, err := failing.Gather(); err == nil {
		t.Fatal("a failed count gathered without an error")
	}
}
