package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeFile is the part of the Compose specification the tests check.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image         string            `yaml:"image"`
	Build         *composeBuild     `yaml:"build"`
	Command       []string          `yaml:"command"`
	ContainerName string            `yaml:"container_name"`
	Ports         []string          `yaml:"ports"`
	Environment   map[string]string `yaml:"environment"`
	Healthcheck   *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	DependsOn map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Restart  string   `yaml:"restart"`
	Profiles []string `yaml:"profiles"`
	Volumes  []string `yaml:"volumes"`
}

type composeBuild struct {
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "compose.yaml"))
	if err != nil {
		t.Fatalf("read compose.yaml: %v", err)
	}
	var c composeFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(false)
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("parse compose.yaml: %v", err)
	}
	return c
}

func TestComposeServices(t *testing.T) {
	t.Parallel()
	c := loadCompose(t)

	// Services in a profile start only when it is asked for.
	var names []string
	for name, s := range c.Services {
		if len(s.Profiles) == 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	want := []string{"asynqmon", "migrate", "postgres", "redis", "scheduler", "worker"}
	if !slices.Equal(names, want) {
		t.Fatalf("services without a profile = %v, want %v", names, want)
	}

	for _, name := range []string{"redis", "postgres"} {
		if hc := c.Services[name].Healthcheck; hc == nil || len(hc.Test) == 0 {
			t.Errorf("%s has no healthcheck", name)
		}
	}

	// The reviewfleet services share the image built from deploy/Dockerfile
	// and differ in their subcommand.
	commands := map[string]string{"migrate": "migrate", "worker": "worker", "scheduler": "scheduler"}
	for name, sub := range commands {
		s := c.Services[name]
		if s.Build == nil || s.Build.Dockerfile != "deploy/Dockerfile" || s.Build.Context != "." {
			t.Errorf("%s build = %+v, want context . and deploy/Dockerfile", name, s.Build)
		}
		if !slices.Equal(s.Command, []string{sub}) {
			t.Errorf("%s command = %v, want [%s]", name, s.Command, sub)
		}
		for _, v := range []string{"DATABASE_URL", "REDIS_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY"} {
			if got := s.Environment[v]; !strings.HasPrefix(got, "${"+v) {
				t.Errorf("%s environment %s = %q, want it passed through from the host (${%s…})", name, v, got, v)
			}
		}
	}
	if _, err := os.Stat("Dockerfile"); err != nil {
		t.Errorf("deploy/Dockerfile: %v", err)
	}

	worker := c.Services["worker"]
	if worker.ContainerName != "" {
		t.Errorf("worker has container_name %q: it could not be scaled", worker.ContainerName)
	}
	if len(worker.Ports) != 0 {
		t.Errorf("worker publishes ports %v: replicas would collide", worker.Ports)
	}

	conditions := []struct{ service, on, condition string }{
		{"migrate", "postgres", "service_healthy"},
		{"worker", "migrate", "service_completed_successfully"},
		{"worker", "redis", "service_healthy"},
		{"scheduler", "migrate", "service_completed_successfully"},
		{"asynqmon", "redis", "service_healthy"},
	}
	for _, tt := range conditions {
		if got := c.Services[tt.service].DependsOn[tt.on].Condition; got != tt.condition {
			t.Errorf("%s depends on %s with condition %q, want %q", tt.service, tt.on, got, tt.condition)
		}
	}
	if r := c.Services["migrate"].Restart; r != "no" {
		t.Errorf("migrate restart = %q, want \"no\" (runs once)", r)
	}

	// The webhook receiver publishes its webhook port alone; its probes
	// and metrics stay on the admin port inside the Compose network.
	serve := c.Services["serve"]
	if !slices.Equal(serve.Profiles, []string{"github"}) || !slices.Equal(serve.Command, []string{"serve"}) {
		t.Errorf("serve profiles %v command %v, want profile github running serve", serve.Profiles, serve.Command)
	}
	if !slices.Equal(serve.Ports, []string{"127.0.0.1:8090:8090"}) {
		t.Errorf("serve publishes %v, want the webhook port 8090 alone", serve.Ports)
	}
	if serve.Environment["REVIEWFLEET_WEBHOOK_ADMIN_ADDR"] != ":8083" || !strings.HasPrefix(serve.Environment["GITHUB_WEBHOOK_SECRET"], "${GITHUB_WEBHOOK_SECRET") ||
		!strings.HasPrefix(serve.Environment["DATABASE_URL"], "${DATABASE_URL") {
		t.Errorf("serve environment = %v, want the fleet's, the webhook secret and admin address :8083", serve.Environment)
	}
	if hc := serve.Healthcheck; hc == nil || !slices.Contains(hc.Test, "http://127.0.0.1:8083/readyz") {
		t.Errorf("serve healthcheck = %+v, want /readyz on the admin port 8083", hc)
	}

	mon := c.Services["asynqmon"]
	if !strings.HasPrefix(mon.Image, "hibiken/asynqmon") {
		t.Errorf("asynqmon image = %q", mon.Image)
	}
	if !slices.ContainsFunc(mon.Ports, func(p string) bool { return strings.HasSuffix(p, ":8080") }) {
		t.Errorf("asynqmon ports = %v, want 8080 published", mon.Ports)
	}
}

func TestDockerfileBuildsStaticBinary(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []string{
		`CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/reviewfleet ./cmd/reviewfleet`,
		`ENTRYPOINT ["/usr/local/bin/reviewfleet"]`,
		"apk add --no-cache git ca-certificates",
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	// The final stage must not run as root.
	final := df[strings.LastIndex(df, "\nFROM "):]
	if !strings.Contains(final, "\nUSER 10001") {
		t.Error("final stage has no non-root USER")
	}
	if _, err := os.Stat(filepath.Join("..", "cmd", "reviewfleet")); err != nil {
		t.Errorf("build target ./cmd/reviewfleet: %v", err)
	}

	// The ignore file must keep what the build needs in the context.
	ignore, err := os.ReadFile("Dockerfile.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(ignore), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, needed := range []string{"go.mod", "go.sum", "cmd", "internal", "migrations"} {
			if matched, _ := filepath.Match(line, needed); matched || line == needed {
				t.Errorf("Dockerfile.dockerignore pattern %q drops %s from the build context", line, needed)
			}
		}
	}
}
