# template-drift-controller. `make help` lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
GO ?= go
# Tests log the control plane's versions; -v keeps those lines in the output.
GOTEST_FLAGS ?= -count=1 -v -timeout 30m
PKGS ?= ./...

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: testbin
testbin: ## Build kube-apiserver, kubectl and etcd from the Go module proxy and fetch CRDs into bin/ (cached).
	@start=$$SECONDS; \
	bash hack/build-etcd.sh; \
	bash hack/build-kube.sh; \
	bash hack/fetch-crds.sh; \
	echo "testbin: provisioning took $$((SECONDS - start))s"

.PHONY: test
test: testbin ## Provision the test control plane if needed, then run unit and integration tests.
	$(GO) test $(GOTEST_FLAGS) $(PKGS)

.PHONY: fmt
fmt: ## Format the code.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Check formatting and run go vet.
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

.PHONY: build
build: ## Build the controller binary into bin/.
	CGO_ENABLED=0 $(GO) build -o bin/template-drift-controller ./cmd/template-drift-controller

.PHONY: clean
clean: ## Remove bin/ (the user cache in ~/.cache/template-drift-controller stays).
	rm -rf bin
