# reviewfleet — common tasks. `make help` lists them.
GO ?= go

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.6.1
# sqlc turns store/queries/*.sql into typed Go checked against the
# migrations (store/sqlc.yaml). Pinned; building it needs cgo (gcc).
SQLC ?= github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1

.PHONY: help build test race vet lint fmt ci demo bench kustomize fuzz sqlc sqlc-check

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build the reviewfleet binary into ./bin
	$(GO) build -o bin/reviewfleet ./cmd/reviewfleet

# deploy/ is a module of its own (its tests need Kubernetes and kustomize
# libraries the program does not), so ./... at the root stops at it.
test: ## run every test, the deploy module's included (the README's test command)
	$(GO) test ./...
	cd deploy && $(GO) test ./...

race: ## run the tests with the race detector
	$(GO) test -race ./...
	cd deploy && $(GO) test -race ./...

vet: ## go vet
	$(GO) vet ./...
	cd deploy && $(GO) vet ./...

lint: ## staticcheck (pinned)
	$(GO) run $(STATICCHECK) ./...
	cd deploy && $(GO) run $(STATICCHECK) ./...

sqlc: ## regenerate the store's typed queries (store/internal/sqlcdb) after changing store/queries or a migration
	cd store && $(GO) run $(SQLC) generate

sqlc-check: ## fail when a store query no longer fits the schema or the generated code is stale
	cd store && $(GO) run $(SQLC) diff

fmt: ## gofmt every file
	gofmt -w $$(git ls-files '*.go')

demo: ## review the bundled sample offline
	$(GO) run ./cmd/reviewfleet review --demo

bench: ## run the benchmarks
	$(GO) test -run '^$$' -bench . -benchmem ./...

kustomize: ## render the Kubernetes manifests
	kubectl kustomize deploy/k8s/base >/dev/null && kubectl kustomize deploy/k8s/overlays/production >/dev/null

fuzz: ## run every fuzz target briefly (FUZZTIME=10s; see .ci/fuzz)
	bash .ci/fuzz

ci: ## what CI runs
	bash .ci/run
