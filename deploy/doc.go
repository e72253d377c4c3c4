// Package deploy holds the files that run reviewfleet outside a laptop: the
// container image (Dockerfile), the Kubernetes manifests (k8s/, kustomize),
// the observability files of the Compose profile "observability" (otel/,
// prometheus/ with the alert rules, grafana/ with the dashboard) and, at
// the repository root, compose.yaml. It contains no code; its tests render
// every kustomization and decode each object strictly into its Kubernetes
// type, and check that the Compose file, the dashboard and the alert rules
// use the services and metrics the binary provides.
//
// It is a module of its own (deploy/go.mod, which replaces the reviewfleet
// module with the checkout it sits in) so that the program's module does
// not carry the Kubernetes and kustomize libraries only these tests use.
// `go test ./...` at the repository root therefore does not reach it;
// `make test` and .ci/run run both. A change to the root module's
// requirements needs `go mod tidy` here too.
package deploy
