package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
)

// object is one rendered Kubernetes object, kept generic.
type object map[string]any

func (o object) kind() string { return str(o, "kind") }
func (o object) name() string { return str(o, "metadata", "name") }

// get walks nested maps and lists (ints index lists); nil when absent.
func get(v any, path ...any) any {
	for _, p := range path {
		switch key := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				if o, isObj := v.(object); isObj {
					m, ok = map[string]any(o), true
				}
			}
			if !ok {
				return nil
			}
			v = m[key]
		case int:
			l, ok := v.([]any)
			if !ok || key >= len(l) {
				return nil
			}
			v = l[key]
		}
	}
	return v
}

func str(v any, path ...any) string {
	s, _ := get(v, path...).(string)
	return s
}

// render builds a directory under k8s/ with kustomize (the library kubectl
// embeds, so the test runs without kubectl or a cluster) and parses every
// object generically.
func render(t *testing.T, dir string) []object {
	t.Helper()
	var objs []object
	for _, doc := range renderDocs(t, dir) {
		var o object
		if err := yaml.Unmarshal(doc, &o); err != nil {
			t.Fatalf("parse output of kustomize %s: %v", dir, err)
		}
		if o != nil {
			objs = append(objs, o)
		}
	}
	return objs
}

// kustomizeMu serialises kustomize builds: its OpenAPI schema is a
// package-level value it loads and reads without a lock, and parallel
// builds race on it.
var kustomizeMu sync.Mutex

// renderDocs builds a directory under k8s/ and returns each object's YAML.
func renderDocs(t *testing.T, dir string) [][]byte {
	t.Helper()
	kustomizeMu.Lock()
	defer kustomizeMu.Unlock()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join("k8s", dir))
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var docs [][]byte
	for _, r := range m.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			t.Fatalf("kustomize build %s: %s: %v", dir, r.CurId(), err)
		}
		docs = append(docs, b)
	}
	return docs
}

func find(objs []object, kind, name string) object {
	for _, o := range objs {
		if o.kind() == kind && o.name() == name {
			return o
		}
	}
	return nil
}

func kinds(objs []object) []string {
	var ks []string
	for _, o := range objs {
		if !slices.Contains(ks, o.kind()) {
			ks = append(ks, o.kind())
		}
	}
	slices.Sort(ks)
	return ks
}

func TestKustomizations(t *testing.T) {
	t.Parallel()
	core := []string{"ConfigMap", "Deployment", "Job", "PodDisruptionBudget", "Service", "ServiceAccount"}
	tests := []struct {
		dir     string
		want    []string // kinds beyond core
		without []string
		check   func(t *testing.T, objs []object)
	}{
		{dir: "base", want: []string{"HorizontalPodAutoscaler", "Secret"}, without: []string{"ScaledObject", "NetworkPolicy", "ServiceMonitor"}},
		{dir: "overlays/keda", want: []string{"ScaledObject", "Secret"}, without: []string{"HorizontalPodAutoscaler"}, check: checkScaledObject},
		{dir: "overlays/asynqmon", want: []string{"HorizontalPodAutoscaler", "Secret"}, check: checkAsynqmon},
		{dir: "overlays/production", want: []string{"Namespace", "NetworkPolicy", "ScaledObject", "ServiceMonitor"}, without: []string{"Secret", "HorizontalPodAutoscaler"}, check: checkProduction},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			t.Parallel()
			objs := render(t, tt.dir)
			got := kinds(objs)
			for _, k := range append(slices.Clone(core), tt.want...) {
				if !slices.Contains(got, k) {
					t.Errorf("kinds %v lack %s", got, k)
				}
			}
			for _, k := range tt.without {
				if slices.Contains(got, k) {
					t.Errorf("kinds %v include %s", got, k)
				}
			}
			checkWorkloads(t, objs)
			if tt.check != nil {
				tt.check(t, objs)
			}
		})
	}
}

// checkWorkloads verifies what every variant shares: the subcommands, the
// worker's probes and grace period, and the singleton scheduler.
func checkWorkloads(t *testing.T, objs []object) {
	t.Helper()
	worker := find(objs, "Deployment", "reviewfleet-worker")
	scheduler := find(objs, "Deployment", "reviewfleet-scheduler")
	migrate := find(objs, "Job", "reviewfleet-migrate")
	if worker == nil || scheduler == nil || migrate == nil {
		t.Fatalf("missing workload: worker %v, scheduler %v, migrate %v", worker != nil, scheduler != nil, migrate != nil)
	}
	container := func(o object) any { return get(o, "spec", "template", "spec", "containers", 0) }
	for _, w := range []struct {
		o   object
		arg string
	}{{worker, "worker"}, {scheduler, "scheduler"}, {migrate, "migrate"}} {
		c := container(w.o)
		if args, _ := get(c, "args").([]any); len(args) != 1 || args[0] != w.arg {
			t.Errorf("%s args = %v, want [%s]", w.o.name(), get(c, "args"), w.arg)
		}
		var refs []string
		envFrom, _ := get(c, "envFrom").([]any)
		for _, e := range envFrom {
			refs = append(refs, str(e, "configMapRef", "name")+str(e, "secretRef", "name"))
		}
		if !slices.ContainsFunc(refs, func(s string) bool { return strings.HasPrefix(s, "reviewfleet-env") }) ||
			!slices.Contains(refs, "reviewfleet-secrets") {
			t.Errorf("%s envFrom = %v, want the env ConfigMap and the Secret", w.o.name(), refs)
		}
	}

	wc := container(worker)
	if p := get(wc, "ports", 0, "containerPort"); p != 8081 {
		t.Errorf("worker health port = %v, want 8081", p)
	}
	// Liveness must not depend on Postgres or Redis: a database blip
	// would restart every worker.
	for probe, want := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/livez"} {
		if path := str(wc, probe, "httpGet", "path"); path != want {
			t.Errorf("worker %s path = %q, want %s", probe, path, want)
		}
		if port := get(wc, probe, "httpGet", "port"); port != "health" && port != 8081 {
			t.Errorf("worker %s port = %v, want the 8081 health port", probe, port)
		}
	}
	if g := get(worker, "spec", "template", "spec", "terminationGracePeriodSeconds"); g != 360 {
		t.Errorf("worker terminationGracePeriodSeconds = %v, want 360 (worker.shutdown_timeout 330s + 30s)", g)
	}
	if get(wc, "resources", "requests") == nil {
		t.Error("worker has no resource requests")
	}
	sc := container(scheduler)
	if p := get(sc, "ports", 0, "containerPort"); p != 8082 {
		t.Errorf("scheduler health port = %v, want 8082", p)
	}
	for probe, want := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/livez"} {
		if path := str(sc, probe, "httpGet", "path"); path != want {
			t.Errorf("scheduler %s path = %q, want %s", probe, path, want)
		}
	}
	// Prometheus finds /metrics on the health port of each pod.
	for _, w := range []struct {
		o    object
		port string
	}{{worker, "8081"}, {scheduler, "8082"}} {
		ann := get(w.o, "spec", "template", "metadata", "annotations")
		if str(ann, "prometheus.io/scrape") != "true" || str(ann, "prometheus.io/port") != w.port || str(ann, "prometheus.io/path") != "/metrics" {
			t.Errorf("%s scrape annotations = %v, want scrape, port %s, /metrics", w.o.name(), ann, w.port)
		}
	}
	// Migrations run before the workloads roll: a Sync hook in an earlier
	// Argo CD wave than the Deployments (wave 0).
	ann := get(migrate, "metadata", "annotations")
	if str(ann, "argocd.argoproj.io/hook") != "Sync" || str(ann, "argocd.argoproj.io/sync-wave") != "-1" {
		t.Errorf("migrate Job annotations = %v, want an Argo CD Sync hook in wave -1", ann)
	}
	if r := get(scheduler, "spec", "replicas"); r != 1 {
		t.Errorf("scheduler replicas = %v, want 1", r)
	}
	if s := str(scheduler, "spec", "strategy", "type"); s != "Recreate" {
		t.Errorf("scheduler strategy = %q, want Recreate", s)
	}
}

// checkServe verifies that the webhook receiver exposes its webhook port
// alone, and that its probes and metrics are on the admin port.
func checkServe(t *testing.T, objs []object) {
	t.Helper()
	serve := find(objs, "Deployment", "reviewfleet-serve")
	if serve == nil {
		t.Fatal("no Deployment reviewfleet-serve")
	}
	c := get(serve, "spec", "template", "spec", "containers", 0)
	if args, _ := get(c, "args").([]any); len(args) != 1 || args[0] != "serve" {
		t.Errorf("serve args = %v, want [serve]", get(c, "args"))
	}
	ports := map[any]any{}
	list, _ := get(c, "ports").([]any)
	for _, p := range list {
		ports[get(p, "name")] = get(p, "containerPort")
	}
	if ports["webhook"] != 8090 || ports["health"] != 8083 || len(ports) != 2 {
		t.Errorf("serve ports = %v, want webhook 8090 and health 8083", ports)
	}
	for probe, want := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/livez"} {
		if path, port := str(c, probe, "httpGet", "path"), get(c, probe, "httpGet", "port"); path != want || (port != "health" && port != 8083) {
			t.Errorf("serve %s = %s on %v, want %s on the 8083 admin port", probe, path, port, want)
		}
	}
	ann := get(serve, "spec", "template", "metadata", "annotations")
	if str(ann, "prometheus.io/scrape") != "true" || str(ann, "prometheus.io/port") != "8083" || str(ann, "prometheus.io/path") != "/metrics" {
		t.Errorf("serve scrape annotations = %v, want scrape, port 8083, /metrics", ann)
	}
	// The Service the Ingress points at carries the webhook port only.
	svc := find(objs, "Service", "reviewfleet-webhook")
	if svc == nil {
		t.Fatal("no Service reviewfleet-webhook")
	}
	if sp, _ := get(svc, "spec", "ports").([]any); len(sp) != 1 || get(sp[0], "targetPort") != "webhook" {
		t.Errorf("reviewfleet-webhook ports = %v, want the webhook port alone", get(svc, "spec", "ports"))
	}
	if cfg := renderedConfig(t, objs); cfg.Webhook.AdminAddr != ":8083" || cfg.Webhook.Addr != ":8090" {
		t.Errorf("rendered webhook.addr %q, admin_addr %q; want :8090 and :8083 (the pod's ports)", cfg.Webhook.Addr, cfg.Webhook.AdminAddr)
	}
	// With network policies, anyone may reach the webhook port and only
	// Prometheus the admin port.
	for _, o := range objs {
		if o.kind() != "NetworkPolicy" {
			continue
		}
		rules, _ := get(o, "spec", "ingress").([]any)
		for _, r := range rules {
			rp, _ := get(r, "ports").([]any)
			for _, p := range rp {
				port := get(p, "port")
				open := get(r, "from") == nil
				if open && port != "webhook" {
					t.Errorf("NetworkPolicy %s admits anyone on port %v, want only serve's webhook port", o.name(), port)
				}
			}
		}
	}
}

// checkScaledObject verifies KEDA watches the pending and the active list of
// every queue the pipeline uses, with the key layout asynq gives them, and
// that an active-list trigger asks one pod per worker.concurrency tasks.
func checkScaledObject(t *testing.T, objs []object) {
	t.Helper()
	so := find(objs, "ScaledObject", "reviewfleet-worker")
	if so == nil {
		t.Fatal("no ScaledObject reviewfleet-worker")
	}
	if target := str(so, "spec", "scaleTargetRef", "name"); target != "reviewfleet-worker" {
		t.Errorf("ScaledObject targets %q", target)
	}
	if min, _ := get(so, "spec", "minReplicaCount").(int); min < 1 {
		t.Errorf("minReplicaCount = %v: retries wait in sorted sets only a running worker forwards, keep at least 1", get(so, "spec", "minReplicaCount"))
	}
	concurrency := renderedConfig(t, objs).Worker.Concurrency
	var lists []string
	triggers, _ := get(so, "spec", "triggers").([]any)
	for _, tr := range triggers {
		if typ := str(tr, "type"); typ != "redis" {
			t.Errorf("trigger type %q, want redis", typ)
		}
		list := str(tr, "metadata", "listName")
		lists = append(lists, list)
		if strings.HasSuffix(list, ":active") {
			if n, err := strconv.Atoi(str(tr, "metadata", "listLength")); err != nil || n != concurrency {
				t.Errorf("%s listLength = %q, want worker.concurrency %d", list, str(tr, "metadata", "listLength"), concurrency)
			}
		}
	}
	var want []string
	for _, stage := range pipeline.TaskStages {
		for _, q := range []string{pipeline.Queue(stage), pipeline.BulkQueue(stage)} {
			want = append(want, "asynq:{"+q+"}:pending", "asynq:{"+q+"}:active")
		}
	}
	slices.Sort(lists)
	slices.Sort(want)
	if !slices.Equal(lists, want) {
		t.Errorf("ScaledObject lists = %v, want %v", lists, want)
	}
	env := envConfigMap(t, objs)
	if str(env, "data", "REDIS_ADDRESS") == "" {
		t.Error("reviewfleet-env lacks REDIS_ADDRESS for the scaler")
	}
}

// renderedConfig loads the config.yaml of a rendered reviewfleet-config
// ConfigMap with the binary's loader.
func renderedConfig(t *testing.T, objs []object) config.Config {
	t.Helper()
	for _, o := range objs {
		if o.kind() != "ConfigMap" || !strings.HasPrefix(o.name(), "reviewfleet-config") {
			continue
		}
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(str(o, "data", "config.yaml")), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path)
		if err != nil {
			t.Fatalf("rendered config.yaml: %v", err)
		}
		return cfg
	}
	t.Fatal("no reviewfleet-config ConfigMap")
	return config.Config{}
}

func checkAsynqmon(t *testing.T, objs []object) {
	t.Helper()
	svc := find(objs, "Service", "asynqmon")
	if svc == nil || find(objs, "Deployment", "asynqmon") == nil {
		t.Fatal("asynqmon Deployment or Service missing")
	}
	if p := get(svc, "spec", "ports", 0, "port"); p != 8080 {
		t.Errorf("asynqmon service port = %v, want 8080", p)
	}
}

func checkProduction(t *testing.T, objs []object) {
	t.Helper()
	checkScaledObject(t, objs)
	checkAsynqmon(t, objs)
	checkServe(t, objs)
	for _, o := range objs {
		if o.kind() == "Namespace" {
			continue
		}
		if ns := str(o, "metadata", "namespace"); ns != "reviewfleet" {
			t.Errorf("%s/%s namespace = %q, want reviewfleet", o.kind(), o.name(), ns)
		}
	}
	for _, name := range []string{"reviewfleet-worker", "reviewfleet-scheduler", "reviewfleet-serve"} {
		image := str(find(objs, "Deployment", name), "spec", "template", "spec", "containers", 0, "image")
		if image == "" || strings.HasSuffix(image, ":latest") || !strings.Contains(image, ":") {
			t.Errorf("%s image %q is not pinned", name, image)
		}
	}
}

func envConfigMap(t *testing.T, objs []object) object {
	t.Helper()
	for _, o := range objs {
		if o.kind() == "ConfigMap" && strings.HasPrefix(o.name(), "reviewfleet-env") {
			return o
		}
	}
	t.Fatal("no reviewfleet-env ConfigMap")
	return nil
}

// TestConfigFilesLoad checks that the config.yaml shipped in the ConfigMaps
// is accepted by the binary's strict configuration loader.
func TestConfigFilesLoad(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"k8s/base/config.yaml", "k8s/overlays/production/config.yaml"} {
		cfg, err := config.Load(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if cfg.Worker.HealthAddr != ":8081" {
			t.Errorf("%s: worker.health_addr = %q, want :8081 (the probes' port)", path, cfg.Worker.HealthAddr)
		}
		if cfg.Scheduler.HealthAddr != ":8082" {
			t.Errorf("%s: scheduler.health_addr = %q, want :8082 (its probes' and metrics port)", path, cfg.Scheduler.HealthAddr)
		}
		// A rolling deploy must not cut expert runs: they fit in the grace,
		// and the pod's grace period (360s) leaves the drain its 15s.
		if cfg.Expert.RunTimeout >= cfg.Worker.ShutdownTimeout || cfg.Worker.ShutdownTimeout+20*time.Second > 360*time.Second {
			t.Errorf("%s: expert.run_timeout %s, worker.shutdown_timeout %s: want run < shutdown ≤ 340s", path, cfg.Expert.RunTimeout, cfg.Worker.ShutdownTimeout)
		}
	}
}
