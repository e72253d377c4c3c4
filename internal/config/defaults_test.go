package config

import "testing"

// The defaults agree with each other: a worker started with no
// configuration at all warns about nothing.
func TestDefaultConfigurationHasNoWarnings(t *testing.T) {
	t.Parallel()
	cfg, err := LoadEnv("", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if w := cfg.Warnings(); len(w) > 0 {
		t.Errorf("the default configuration warns: %q", w)
	}
	// And the warning still fires where it should.
	cfg.Worker.ShutdownTimeout = cfg.Expert.RunTimeout / 2
	if len(cfg.Warnings()) == 0 {
		t.Error("no warning with worker.shutdown_timeout below expert.run_timeout")
	}
}
