// Package deploy holds the files that run reviewfleet outside a laptop: the
// container image (Dockerfile), the Kubernetes manifests (k8s/, kustomize)
// and, at the repository root, compose.yaml. It contains no code; its tests
// check that the Compose file and every kustomization parse, render and
// describe the services the binary expects.
package deploy
