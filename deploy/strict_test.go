package deploy

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	sigsyaml "sigs.k8s.io/yaml"
)

// scaledObject is the part of KEDA's keda.sh/v1alpha1 ScaledObject the
// manifests use; decoding is strict, so a field outside it fails the test.
type scaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		ScaleTargetRef struct {
			APIVersion string `json:"apiVersion,omitempty"`
			Kind       string `json:"kind,omitempty"`
			Name       string `json:"name"`
		} `json:"scaleTargetRef"`
		MinReplicaCount *int32 `json:"minReplicaCount,omitempty"`
		MaxReplicaCount *int32 `json:"maxReplicaCount,omitempty"`
		PollingInterval *int32 `json:"pollingInterval,omitempty"`
		CooldownPeriod  *int32 `json:"cooldownPeriod,omitempty"`
		Advanced        *struct {
			HorizontalPodAutoscalerConfig *struct {
				Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
			} `json:"horizontalPodAutoscalerConfig,omitempty"`
		} `json:"advanced,omitempty"`
		Triggers []struct {
			Type     string            `json:"type"`
			Name     string            `json:"name,omitempty"`
			Metadata map[string]string `json:"metadata"`
		} `json:"triggers"`
	} `json:"spec"`
}

// redisTriggerKeys are the metadata keys of KEDA's redis (list) scaler.
var redisTriggerKeys = []string{
	"address", "addressFromEnv", "host", "hostFromEnv", "port", "portFromEnv",
	"username", "usernameFromEnv", "password", "passwordFromEnv",
	"databaseIndex", "enableTLS", "listName", "listLength", "activationListLength",
}

// serviceMonitor is the part of Prometheus Operator's
// monitoring.coreos.com/v1 ServiceMonitor the manifests use.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector *struct {
			MatchNames []string `json:"matchNames,omitempty"`
			Any        bool     `json:"any,omitempty"`
		} `json:"namespaceSelector,omitempty"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path,omitempty"`
			Interval      string `json:"interval,omitempty"`
			ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// kinds maps apiVersion/kind to a new value of its Go type. A rendered
// object of any other kind fails the test: it would not be validated.
var kindTypes = map[string]func() any{
	"v1/ConfigMap":                            func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                               func() any { return &corev1.Secret{} },
	"v1/Service":                              func() any { return &corev1.Service{} },
	"v1/ServiceAccount":                       func() any { return &corev1.ServiceAccount{} },
	"v1/Namespace":                            func() any { return &corev1.Namespace{} },
	"apps/v1/Deployment":                      func() any { return &appsv1.Deployment{} },
	"batch/v1/Job":                            func() any { return &batchv1.Job{} },
	"policy/v1/PodDisruptionBudget":           func() any { return &policyv1.PodDisruptionBudget{} },
	"autoscaling/v2/HorizontalPodAutoscaler":  func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
	"networking.k8s.io/v1/NetworkPolicy":      func() any { return &networkingv1.NetworkPolicy{} },
	"keda.sh/v1alpha1/ScaledObject":           func() any { return &scaledObject{} },
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return &serviceMonitor{} },
}

// decodeStrict decodes one object into its Go type, failing on a field the
// type does not have, a duplicate field or a value of the wrong type.
func decodeStrict(doc []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := sigsyaml.Unmarshal(doc, &tm); err != nil {
		return nil, fmt.Errorf("read apiVersion and kind: %w", err)
	}
	newObj, ok := kindTypes[tm.APIVersion+"/"+tm.Kind]
	if !ok {
		return nil, fmt.Errorf("no Go type for %s %s: add it to kindTypes", tm.APIVersion, tm.Kind)
	}
	obj := newObj()
	if err := sigsyaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", tm.Kind, err)
	}
	if so, ok := obj.(*scaledObject); ok {
		for _, tr := range so.Spec.Triggers {
			for key := range tr.Metadata {
				if tr.Type == "redis" && !slices.Contains(redisTriggerKeys, key) {
					return nil, fmt.Errorf("ScaledObject %s: redis trigger metadata has unknown key %q", so.Name, key)
				}
			}
		}
	}
	return obj, nil
}

// kustomizations lists base and every overlay, so a new overlay is checked
// without being named here.
func kustomizations(t *testing.T) []string {
	t.Helper()
	overlays, err := filepath.Glob("k8s/overlays/*/kustomization.yaml")
	if err != nil || len(overlays) == 0 {
		t.Fatalf("no overlays found: %v", err)
	}
	dirs := []string{"base"}
	for _, o := range overlays {
		dirs = append(dirs, strings.TrimPrefix(filepath.Dir(o), "k8s/"))
	}
	return dirs
}

// TestManifestsDecodeStrictly renders the base and every overlay and decodes
// each object into its Kubernetes API type (KEDA and Prometheus Operator
// objects into local types), then checks the references between them.
func TestManifestsDecodeStrictly(t *testing.T) {
	t.Parallel()
	for _, dir := range kustomizations(t) {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			var objs []any
			for _, doc := range renderDocs(t, dir) {
				obj, err := decodeStrict(doc)
				if err != nil {
					t.Errorf("%v\n%s", err, doc)
					continue
				}
				objs = append(objs, obj)
			}
			checkReferences(t, objs)
		})
	}
}

// checkReferences verifies that what the objects name exists: selectors
// select pods, ports and probes name container ports, envFrom and volumes
// name ConfigMaps, the autoscaler targets the worker Deployment.
func checkReferences(t *testing.T, objs []any) {
	t.Helper()
	configMaps := map[string]*corev1.ConfigMap{}
	var pods []corev1.PodTemplateSpec
	var services []*corev1.Service
	for _, o := range objs {
		switch v := o.(type) {
		case *corev1.ConfigMap:
			configMaps[v.Name] = v
		case *corev1.Service:
			services = append(services, v)
		case *appsv1.Deployment:
			pods = append(pods, v.Spec.Template)
			sel, err := metav1.LabelSelectorAsSelector(v.Spec.Selector)
			if err != nil || !sel.Matches(labels.Set(v.Spec.Template.Labels)) {
				t.Errorf("Deployment %s: selector %v does not select its pods (%v)", v.Name, v.Spec.Selector, err)
			}
		case *batchv1.Job:
			pods = append(pods, v.Spec.Template)
		}
	}
	selectsPod := func(sel labels.Selector) *corev1.PodTemplateSpec {
		for i := range pods {
			if sel.Matches(labels.Set(pods[i].Labels)) {
				return &pods[i]
			}
		}
		return nil
	}
	hasPort := func(p *corev1.PodTemplateSpec, port intstr.IntOrString) bool {
		for _, c := range p.Spec.Containers {
			for _, cp := range c.Ports {
				if (port.Type == intstr.String && cp.Name == port.StrVal) || (port.Type == intstr.Int && cp.ContainerPort == port.IntVal) {
					return true
				}
			}
		}
		return false
	}

	for _, p := range pods {
		for _, c := range p.Spec.Containers {
			for _, e := range c.EnvFrom {
				if e.ConfigMapRef != nil && configMaps[e.ConfigMapRef.Name] == nil {
					t.Errorf("container %s: envFrom ConfigMap %q is not rendered", c.Name, e.ConfigMapRef.Name)
				}
			}
			for _, probe := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
				if probe != nil && probe.HTTPGet != nil && !hasPort(&corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}, probe.HTTPGet.Port) {
					t.Errorf("container %s: probe port %s is not a container port", c.Name, probe.HTTPGet.Port.String())
				}
			}
		}
		for _, v := range p.Spec.Volumes {
			if v.ConfigMap != nil && configMaps[v.ConfigMap.Name] == nil {
				t.Errorf("volume %s: ConfigMap %q is not rendered", v.Name, v.ConfigMap.Name)
			}
		}
	}

	for _, o := range objs {
		switch v := o.(type) {
		case *corev1.Service:
			if v.Spec.Selector == nil {
				continue
			}
			pod := selectsPod(labels.SelectorFromSet(v.Spec.Selector))
			if pod == nil {
				t.Errorf("Service %s selects no pod", v.Name)
				continue
			}
			for _, sp := range v.Spec.Ports {
				if !hasPort(pod, sp.TargetPort) {
					t.Errorf("Service %s: targetPort %s is not a port of its pods", v.Name, sp.TargetPort.String())
				}
			}
		case *policyv1.PodDisruptionBudget:
			sel, err := metav1.LabelSelectorAsSelector(v.Spec.Selector)
			if err != nil || selectsPod(sel) == nil {
				t.Errorf("PodDisruptionBudget %s selects no pod (%v)", v.Name, err)
			}
		case *networkingv1.NetworkPolicy:
			sel, err := metav1.LabelSelectorAsSelector(&v.Spec.PodSelector)
			if err != nil || selectsPod(sel) == nil {
				t.Errorf("NetworkPolicy %s selects no pod (%v)", v.Name, err)
			}
			for _, rule := range v.Spec.Ingress {
				for _, port := range rule.Ports {
					if port.Port == nil {
						continue
					}
					for _, p := range pods {
						if sel.Matches(labels.Set(p.Labels)) && len(p.Spec.Containers[0].Ports) > 0 && !hasPort(&p, *port.Port) {
							t.Errorf("NetworkPolicy %s admits port %s, which pod %s does not serve", v.Name, port.Port.String(), p.Labels["app.kubernetes.io/name"])
						}
					}
				}
			}
		case *scaledObject:
			if !slices.ContainsFunc(objs, func(o any) bool {
				d, ok := o.(*appsv1.Deployment)
				return ok && d.Name == v.Spec.ScaleTargetRef.Name
			}) {
				t.Errorf("ScaledObject %s targets %q, which is not rendered", v.Name, v.Spec.ScaleTargetRef.Name)
			}
			for _, tr := range v.Spec.Triggers {
				env := tr.Metadata["addressFromEnv"]
				if env == "" {
					continue
				}
				found := false
				for name, cm := range configMaps {
					found = found || (strings.HasPrefix(name, "reviewfleet-env") && cm.Data[env] != "")
				}
				if !found {
					t.Errorf("ScaledObject %s: trigger reads %s, which reviewfleet-env does not set", v.Name, env)
				}
			}
		case *serviceMonitor:
			sel, err := metav1.LabelSelectorAsSelector(&v.Spec.Selector)
			if err != nil {
				t.Errorf("ServiceMonitor %s: %v", v.Name, err)
				continue
			}
			for _, ep := range v.Spec.Endpoints {
				n := 0
				for _, svc := range services {
					if sel.Matches(labels.Set(svc.Labels)) && slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep.Port }) {
						n++
					}
				}
				if n < 2 {
					t.Errorf("ServiceMonitor %s: port %q found on %d Services, want the worker's and the scheduler's", v.Name, ep.Port, n)
				}
			}
		}
	}
}

// TestStrictDecodingRejectsTypos makes sure the strict decoding above can
// fail: a misspelt field, a value of the wrong type and an unknown kind in a
// rendered manifest are each refused.
func TestStrictDecodingRejectsTypos(t *testing.T) {
	t.Parallel()
	docs := renderDocs(t, "overlays/production")
	find := func(kind, name string) []byte {
		for _, d := range docs {
			if bytes.Contains(d, []byte("kind: "+kind+"\n")) && bytes.Contains(d, []byte("name: "+name+"\n")) {
				return d
			}
		}
		t.Fatalf("no %s %s rendered", kind, name)
		return nil
	}
	deployment := find("Deployment", "reviewfleet-worker")
	scaled := find("ScaledObject", "reviewfleet-worker")
	monitor := find("ServiceMonitor", "reviewfleet")
	for _, d := range [][]byte{deployment, scaled, monitor} {
		if _, err := decodeStrict(d); err != nil {
			t.Fatalf("the unchanged object is refused: %v", err)
		}
	}
	tests := []struct {
		name     string
		doc      []byte
		old, new string
	}{
		{"misspelt pod field", deployment, "terminationGracePeriodSeconds:", "terminationGracePeriodSecond:"},
		{"misspelt container field", deployment, "readinessProbe:", "readynessProbe:"},
		{"wrong type", deployment, "terminationGracePeriodSeconds: 360", "terminationGracePeriodSeconds: six minutes"},
		{"misspelt ScaledObject field", scaled, "minReplicaCount:", "minReplicasCount:"},
		{"misspelt trigger metadata", scaled, "listLength:", "listLenght:"},
		{"misspelt ServiceMonitor field", monitor, "endpoints:", "endpoint:"},
		{"unknown kind", deployment, "kind: Deployment", "kind: Deploymnet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Contains(tt.doc, []byte(tt.old)) {
				t.Fatalf("rendered object lacks %q", tt.old)
			}
			doc := bytes.Replace(tt.doc, []byte(tt.old), []byte(tt.new), 1)
			if _, err := decodeStrict(doc); err == nil {
				t.Errorf("%q → %q was accepted", tt.old, tt.new)
			}
		})
	}
}

// TestMigrateFirstSelector checks the first step of the kubectl deploy order
// in docs/operations.md: its label selector applies the migrate Job and
// everything it reads, and none of the workloads that must wait for it.
func TestMigrateFirstSelector(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`kubectl apply -k deploy/k8s/overlays/production -l '([^']+)'`).FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/operations.md has no `kubectl apply -k … -l '…'` step")
	}
	sel, err := labels.Parse(string(m[1]))
	if err != nil {
		t.Fatalf("selector %q: %v", m[1], err)
	}
	for _, dir := range kustomizations(t) {
		for _, o := range render(t, dir) {
			set := labels.Set{}
			for _, k := range []string{"app.kubernetes.io/name", "app.kubernetes.io/component", "app.kubernetes.io/part-of"} {
				if v := str(o, "metadata", "labels", k); v != "" {
					set[k] = v
				}
			}
			applied := sel.Matches(set)
			waits := (o.kind() == "Deployment" || o.kind() == "Service") && strings.HasPrefix(o.name(), "reviewfleet-")
			if applied == waits {
				t.Errorf("%s: %s %s applied in the first step = %v", dir, o.kind(), o.name(), applied)
			}
		}
	}
}
