# template-drift-controller. `make help` lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
GO ?= go
# Every build, vet and test of this module compiles as the image's binary is
# compiled: with -trimpath and without cgo. Each of the two changes the cache
# key of every package in Go's build cache, so with them the image's
# linux/amd64 build, go vet, the tests and the binaries the tests build share
# one compile of each package instead of compiling the dependencies twice
# (about 10 CPU-minutes on a fresh machine). Nothing here needs cgo.
export CGO_ENABLED := 0
export GOFLAGS := $(strip -trimpath $(filter-out -trimpath,$(GOFLAGS)))
# Tests log the control plane's versions; -v keeps those lines in the output.
GOTEST_FLAGS ?= -count=1 -v -timeout 30m
PKGS ?= ./...
FUZZTIME ?= 10m

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: testbin
testbin: ## Build kube-apiserver, etcd and the real Cluster API and Metal3 managers from the Go module proxy, and fetch CRDs, into bin/ (cached).
	@start=$$SECONDS; \
	bash hack/build-etcd.sh; \
	bash hack/build-kube.sh; \
	bash hack/fetch-crds.sh; \
	bash hack/build-capi.sh; \
	echo "testbin: provisioning took $$((SECONDS - start))s"

.PHONY: capi-bin
capi-bin: ## Build only the real Cluster API and CAPM3 managers from the Go module proxy (cached; part of testbin).
	bash hack/build-capi.sh

.PHONY: fuzz
fuzz: ## Run every native Go fuzz target for FUZZTIME each (default 10m; CI does not fuzz, make test runs the seed corpora), then print executions per target.
	FUZZTIME="$(FUZZTIME)" GO="$(GO)" bash hack/fuzz.sh

.PHONY: test
test: testbin ## Provision the test control plane if needed, then run unit and integration tests.
	$(GO) test $(GOTEST_FLAGS) $(PKGS)

.PHONY: fmt
fmt: ## Format the code.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Check formatting, run go vet, then golangci-lint (make lint).
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/...
	$(GO) -C hack/image vet ./...
	$(MAKE) --no-print-directory lint

# golangci-lint is pinned in hack/build-tools.sh and built into bin/ by it;
# .golangci.yml enables the linters (the e2e build tag included).
GOLANGCI_LINT_VERSION ?= $(shell sed -n 's/^GOLANGCI_LINT_VERSION=//p' hack/build-tools.sh)
GOLANGCI_LINT ?= bin/golangci-lint/$(GOLANGCI_LINT_VERSION)/golangci-lint
LINT_ARGS ?=

.PHONY: lint
lint: ## Build golangci-lint from the Go module proxy (cached) and run it over the whole repository, hack/image's module too.
	bash hack/build-tools.sh golangci-lint
	$(GOLANGCI_LINT) run $(LINT_ARGS) ./...
	cd hack/image && $(CURDIR)/$(GOLANGCI_LINT) run $(LINT_ARGS) ./...

# Unit tests: the packages whose tests need no control plane, so `make unit`
# runs without `make testbin`. How to choose: a package belongs in UNIT_PKGS
# when none of its _test.go files starts internal/testenv
# (`grep -l testenv.Start PKG/*_test.go` finds nothing, and its tests pass with
# no bin/). A package that mixes both goes in UNIT_MIXED_PKGS, with its
# integration tests listed by name in UNIT_SKIP; a new integration test that is
# not listed there fails `make unit` loudly instead of being skipped quietly.
UNIT_PKGS ?= ./api/... ./internal/testenv/doctable/... ./internal/diff/... ./internal/plan/... ./internal/manifest/... ./internal/report/... ./internal/diffreport/... ./internal/monitoring/... ./e2e/framework/...
# internal/chart is left to `make chart-test`, which runs its render, golden,
# schema and lint tests (no control plane) together with its API server ones.
UNIT_MIXED_PKGS ?= ./internal/release/
# internal/release: the tests in reader_test.go, which call clusterEnv.
UNIT_SKIP ?= ^(TestGet(RoundTrip|Memo|Concurrent|NotFound|Corrupt|ManifestTooLarge)|TestPreviousDeployed(Pruned)?)$$
# Pure tests may use Go's test cache: a package whose code, testdata and env
# did not change is not rerun. UNIT_FLAGS=-count=1 forces a rerun.
UNIT_FLAGS ?=

.PHONY: unit
unit: ## Run the unit tests that need no control plane (UNIT_PKGS; no testbin), in seconds.
	$(GO) test $(UNIT_FLAGS) $(UNIT_PKGS)
	$(GO) test $(UNIT_FLAGS) -skip '$(UNIT_SKIP)' $(UNIT_MIXED_PKGS)

# What a build stamps into the binary (internal/version, printed by
# --version) and the image's labels. VERSION defaults to the chart's
# appVersion, so the binary, the image tag the chart pulls by default and the
# chart agree; COMMIT is the checked-out commit (-dirty with local changes);
# SOURCE_DATE_EPOCH, the commit's time, is the binary's date and every
# timestamp of the image, so that two builds of one commit are the same
# bytes. Each may be set on the command line, e.g. for a build from a tarball.
VERSION ?= $(shell sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$$/\1/p' charts/template-drift-controller/Chart.yaml)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)$(if $(shell git status --porcelain 2>/dev/null),-dirty)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
# Evaluated once here, not at every use (image-check passes them to its
# second build: the tests beside it may leave files that would make the
# tree look dirty).
VERSION := $(VERSION)
# `make release VERSION=v0.2.0` and VERSION=0.2.0 are one version: the tag
# has the v, the chart, the image tag and --version do not.
override VERSION := $(patsubst v%,%,$(VERSION))
COMMIT := $(COMMIT)
SOURCE_DATE_EPOCH := $(SOURCE_DATE_EPOCH)
DATE := $(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r $(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ)
VERSION_PKG := github.com/templatedrift/template-drift-controller/internal/version
# The Dockerfile passes the same -X flags (a test in hack/image checks it).
LDFLAGS ?= -s -w -X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).Commit=$(COMMIT) -X $(VERSION_PKG).Date=$(DATE)
# -buildvcs=false: the commit is stamped above, and a build from a tarball or
# the Dockerfile's context (no .git) then gives the same bytes as one from git.
GO_BUILD_FLAGS ?= -trimpath -buildvcs=false -ldflags "$(LDFLAGS)"

.PHONY: build
build: ## Build the controller and the CLI (templatedrift, and its kubectl plugin name) into bin/, with VERSION, COMMIT and DATE stamped (--version).
	CGO_ENABLED=0 $(GO) build $(GO_BUILD_FLAGS) -o bin/template-drift-controller ./cmd/template-drift-controller
	CGO_ENABLED=0 $(GO) build $(GO_BUILD_FLAGS) -o bin/templatedrift ./cmd/templatedrift
	ln -sf templatedrift bin/kubectl-templatedrift

.PHONY: version
version: ## Print VERSION, COMMIT and DATE as builds stamp them (for docker build --build-arg).
	@echo VERSION=$(VERSION); echo COMMIT=$(COMMIT); echo DATE=$(DATE)

# The version whose CHANGELOG section `make release-notes` prints; a leading
# v is dropped, as the sections are `## vX.Y.Z - date`.
RELEASE_VERSION ?= $(VERSION)

.PHONY: release-notes
release-notes: ## Print the CHANGELOG section of RELEASE_VERSION (default VERSION, the chart's appVersion): the release page's text.
	@awk -v want="v$(patsubst v%,%,$(RELEASE_VERSION))" ' \
	  /^## / { if (found) exit; found = ($$2 == want); next } \
	  found && /^$$/ { if (printed) blanks++; next } \
	  found { while (blanks > 0) { print ""; blanks-- } print; printed = 1 } \
	  END { if (!found) { print "release-notes: CHANGELOG.md has no section ## " want > "/dev/stderr"; exit 1 } }' CHANGELOG.md

# The image (docs/release.md): built without a daemon by hack/image, a Go
# module of its own that uses go-containerregistry. One static binary per
# platform on an empty base, with a CA bundle and a nonroot user, written as
# an OCI layout with an index over the platforms.
IMAGE_PLATFORMS ?= linux/amd64 linux/arm64
IMAGE_DIR ?= _artifacts/image
IMAGE_SOURCE ?= https://github.com/templatedrift/template-drift-controller
# The org.opencontainers.image.licenses label, an SPDX expression: the
# LICENSE file's.
IMAGE_LICENSES ?= Apache-2.0
# Where `make image-push` pushes: the chart's default image.repository and tag.
IMAGE ?= ghcr.io/templatedrift/template-drift-controller:$(VERSION)
IMAGE_TOOL := bin/image-tool

.PHONY: image-tool
image-tool:
	$(GO) build -C hack/image -o $(CURDIR)/$(IMAGE_TOOL) .

.PHONY: image
image: image-tool ## Build the controller image for IMAGE_PLATFORMS without a daemon (reproducible): an OCI layout in _artifacts/image/layout.
	@rm -rf $(IMAGE_DIR)/bin
	@for p in $(IMAGE_PLATFORMS); do \
	  echo "go build $$p"; \
	  CGO_ENABLED=0 GOOS=$${p%%/*} GOARCH=$${p#*/} $(GO) build $(GO_BUILD_FLAGS) \
	    -o $(IMAGE_DIR)/bin/$${p/\//-}/template-drift-controller ./cmd/template-drift-controller || exit 1; \
	done
	$(IMAGE_TOOL) build --out $(IMAGE_DIR)/layout --epoch $(SOURCE_DATE_EPOCH) \
	  --version $(VERSION) --revision $(COMMIT) --source $(IMAGE_SOURCE) --licenses $(IMAGE_LICENSES) \
	  $(foreach p,$(IMAGE_PLATFORMS),--binary $(p)=$(IMAGE_DIR)/bin/$(subst /,-,$(p))/template-drift-controller)

.PHONY: image-check
image-check: image ## Build the image a second time and check it: platforms, user 65532, entrypoint, labels, CA bundle, --version of the host's binary, same digest.
	$(MAKE) --no-print-directory image IMAGE_DIR=$(IMAGE_DIR)-rebuild COMMIT=$(COMMIT) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH)
	$(IMAGE_TOOL) check --layout $(IMAGE_DIR)/layout --same-as $(IMAGE_DIR)-rebuild/layout \
	  --platforms "$(IMAGE_PLATFORMS)" --version $(VERSION) --revision $(COMMIT)
	cd hack/image && $(GO) test -count=1 ./...

.PHONY: image-push
image-push: image ## Push the image index to IMAGE (default: the chart's image, tag VERSION) with the Docker config's credentials.
	$(IMAGE_TOOL) push --layout $(IMAGE_DIR)/layout --image $(IMAGE)

# A release (docs/release.md): `make release VERSION=vX.Y.Z` writes into
# RELEASE_DIR every file a release page holds. Its intermediate files (the
# binaries, the image's layout) go to RELEASE_DIR.work. Every file is the
# same bytes for one commit, whatever the machine's clock: `make
# release-check` builds it twice and compares SHA256SUMS.
RELEASE_DIR ?= _artifacts/release
RELEASE_WORK = $(RELEASE_DIR).work
# The CLI's platforms; CI builds linux/amd64 only.
CLI_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
CHART_DIR := charts/template-drift-controller
# Where `make release-push` pushes the chart: oci://$(CHART_REPOSITORY)/template-drift-controller:VERSION.
CHART_REPOSITORY ?= ghcr.io/templatedrift/charts
IMAGE_REPOSITORY = $(firstword $(subst :, ,$(IMAGE)))
RELEASE_TOOL := bin/release-tool
# cyclonedx-gomod is pinned in hack/build-tools.sh and built into bin/ by it.
CYCLONEDX_GOMOD_VERSION ?= $(shell sed -n 's/^CYCLONEDX_GOMOD_VERSION=//p' hack/build-tools.sh)
CYCLONEDX_GOMOD ?= bin/cyclonedx-gomod/$(CYCLONEDX_GOMOD_VERSION)/cyclonedx-gomod
# The release's files, named after VERSION.
R = $(RELEASE_DIR)/template-drift-controller
CHART_VERSION = $(shell sed -n 's/^version: *"\{0,1\}\([^"]*\)"\{0,1\}$$/\1/p' $(CHART_DIR)/Chart.yaml)
CHART_APP_VERSION = $(shell sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$$/\1/p' $(CHART_DIR)/Chart.yaml)

.PHONY: release-tool
release-tool:
	$(GO) build -o $(RELEASE_TOOL) ./hack/release

.PHONY: release-version
release-version: ## Fail unless VERSION is the chart's version and appVersion and has a CHANGELOG section.
	@if [ "$(VERSION)" != "$(CHART_VERSION)" ] || [ "$(VERSION)" != "$(CHART_APP_VERSION)" ]; then \
	  echo "release: VERSION $(VERSION) is not the chart's version $(CHART_VERSION) and appVersion $(CHART_APP_VERSION) (docs/release.md, Cutting a release)"; exit 1; \
	fi
	@$(MAKE) --no-print-directory -s release-notes RELEASE_VERSION=$(VERSION) >/dev/null

.PHONY: release
release: release-version image image-tool release-tool ## Write a release into RELEASE_DIR (VERSION=vX.Y.Z): image layout, chart, install.yaml, CLI archives, SBOMs, notes, SHA256SUMS.
	bash hack/build-tools.sh cyclonedx-gomod
	rm -rf $(RELEASE_DIR) $(RELEASE_WORK)/cli
	mkdir -p $(RELEASE_DIR) $(RELEASE_WORK)/cli
	$(IMAGE_TOOL) archive --out $(R)_$(VERSION)_image.oci.tar --epoch $(SOURCE_DATE_EPOCH) --dir $(IMAGE_DIR)/layout
	$(RELEASE_TOOL) chart --chart $(CHART_DIR) --out $(RELEASE_DIR) --epoch $(SOURCE_DATE_EPOCH)
	$(RELEASE_TOOL) install --image $(IMAGE_REPOSITORY)@$$($(IMAGE_TOOL) digest --layout $(IMAGE_DIR)/layout) \
	  --version $(VERSION) --out $(RELEASE_DIR)/install.yaml
	@for p in $(CLI_PLATFORMS); do \
	  os=$${p%%/*}; arch=$${p#*/}; out=$(RELEASE_WORK)/cli/$$os-$$arch; \
	  echo "go build templatedrift $$p"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build $(GO_BUILD_FLAGS) -o $$out/templatedrift ./cmd/templatedrift || exit 1; \
	  $(IMAGE_TOOL) archive --gzip --out $(RELEASE_DIR)/templatedrift_$(VERSION)_$${os}_$${arch}.tar.gz --epoch $(SOURCE_DATE_EPOCH) \
	    --file templatedrift=$$out/templatedrift --file LICENSE=LICENSE --file README.md=README.md \
	    --link kubectl-templatedrift=templatedrift || exit 1; \
	done
	$(CYCLONEDX_GOMOD) bin -json -notimestamp -noserial -licenses -version v$(VERSION) \
	  -output $(RELEASE_DIR)/templatedrift_$(VERSION).sbom.cdx.json $(RELEASE_WORK)/cli/$(subst /,-,$(firstword $(CLI_PLATFORMS)))/templatedrift
	$(CYCLONEDX_GOMOD) bin -json -notimestamp -noserial -licenses -version v$(VERSION) \
	  -output $(R)_$(VERSION).sbom.cdx.json $(IMAGE_DIR)/bin/$(subst /,-,$(firstword $(IMAGE_PLATFORMS)))/template-drift-controller
	$(IMAGE_TOOL) sbom --layout $(IMAGE_DIR)/layout --repository $(IMAGE_REPOSITORY) --epoch $(SOURCE_DATE_EPOCH) \
	  --licenses $(IMAGE_LICENSES) --binary-sbom $(R)_$(VERSION).sbom.cdx.json --out $(R)_$(VERSION)_image.sbom.cdx.json
	$(MAKE) --no-print-directory -s release-notes RELEASE_VERSION=$(VERSION) >$(RELEASE_DIR)/RELEASE_NOTES.md
	$(IMAGE_TOOL) sums --dir $(RELEASE_DIR) --out $(RELEASE_DIR)/SHA256SUMS
	@echo "release $(VERSION) of $(COMMIT) written to $(RELEASE_DIR):"; cat $(RELEASE_DIR)/SHA256SUMS

.PHONY: release-check
release-check: ## Build the release twice (the second into RELEASE_DIR-rebuild) and check it: the same SHA256SUMS, the image's checks, each file's contents, the CLI's --version.
	$(MAKE) --no-print-directory release
	$(MAKE) --no-print-directory release RELEASE_DIR=$(RELEASE_DIR)-rebuild IMAGE_DIR=$(RELEASE_DIR)-rebuild.work/image \
	  COMMIT=$(COMMIT) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH)
	@if ! diff $(RELEASE_DIR)/SHA256SUMS $(RELEASE_DIR)-rebuild/SHA256SUMS; then \
	  echo "release-check: two builds of $(COMMIT) differ"; exit 1; fi
	@echo "release-check: two builds give the same SHA256SUMS"
	$(IMAGE_TOOL) check --layout $(IMAGE_DIR)/layout --platforms "$(IMAGE_PLATFORMS)" --version $(VERSION) --revision $(COMMIT)
	$(RELEASE_TOOL) verify --dir $(RELEASE_DIR) --version $(VERSION) --commit $(COMMIT) --cli-platform $(firstword $(CLI_PLATFORMS))
	cd hack/image && $(GO) test -count=1 ./...

.PHONY: release-push
release-push: release image-push ## Push the release's image (IMAGE) and chart (CHART_REPOSITORY) with the Docker config's credentials.
	$(RELEASE_TOOL) push-chart --chart $(RELEASE_DIR)/template-drift-controller-$(VERSION).tgz \
	  --repository $(CHART_REPOSITORY) --epoch $(SOURCE_DATE_EPOCH)

.PHONY: clean
clean: ## Remove bin/ (the user cache in ~/.cache/template-drift-controller stays).
	rm -rf bin

.PHONY: demo
demo: testbin ## Show the problem and its cure on a local control plane, then preview two chart changes (DEMO_KEEP=1 keeps it up).
	$(GO) run ./cmd/demo

# controller-gen is pinned in hack/build-tools.sh and built into bin/ by it.
CONTROLLER_GEN_VERSION ?= $(shell sed -n 's/^CONTROLLER_GEN_VERSION=//p' hack/build-tools.sh)
CONTROLLER_GEN ?= bin/controller-gen/$(CONTROLLER_GEN_VERSION)/controller-gen

.PHONY: tools
tools: ## Build the tools (controller-gen, golangci-lint, promtool) from the Go module proxy into bin/ (cached).
	bash hack/build-tools.sh

.PHONY: manifests
manifests: ## Generate config/rbac/role.yaml from the +kubebuilder:rbac markers in controllers/.
	bash hack/build-tools.sh controller-gen
	$(CONTROLLER_GEN) rbac:roleName=template-drift-controller paths=./controllers/... output:rbac:artifacts:config=config/rbac

.PHONY: chart-test
chart-test: testbin ## Test the Helm chart and config/: golden renders, schema, lint, RBAC and API server dry-runs.
	$(GO) test -count=1 ./internal/chart/

# promtool is pinned in hack/build-tools.sh and built into bin/ by it.
PROMTOOL_VERSION ?= $(shell sed -n 's/^PROMTOOL_VERSION=//p' hack/build-tools.sh)
PROMTOOL ?= bin/promtool/$(PROMTOOL_VERSION)/promtool

.PHONY: monitoring-test
monitoring-test: ## Build promtool (cached); check the alerts and the dashboard's queries with it, run the alerts' unit tests, and test that the metrics they query are served.
	bash hack/build-tools.sh promtool
	$(GO) run ./hack/promcheck -promtool $(PROMTOOL)
	$(GO) test $(UNIT_FLAGS) ./internal/monitoring/ ./internal/report/

# verify first checks that `go mod tidy` would change neither go.mod nor
# go.sum, of the controller's module and of hack/image's. It then compares
# checksums of every file under config/ and charts/ (tracked or not) before
# and after `make manifests`, so it flags stale generated files whether or
# not they are committed yet.
# VERIFY_CHART_TEST empty leaves out the chart tests (CI: `make test` ran them).
VERIFY_CHART_TEST ?= 1
.PHONY: verify
verify: ## Fail if `go mod tidy` would change go.mod/go.sum or `make manifests` changes config/ or charts/, then run the chart tests.
	@for dir in . hack/image; do \
	  if ! out=$$($(GO) -C $$dir mod tidy -diff 2>&1); then \
	    echo "verify: go mod tidy would change $$dir/go.mod or go.sum (run it there and commit):"; echo "$$out"; exit 1; \
	  fi; \
	done; \
	echo "verify: go.mod and go.sum are tidy"
	@snapshot() { find config charts -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum; }; \
	before="$$(snapshot)"; \
	$(MAKE) --no-print-directory manifests; \
	after="$$(snapshot)"; \
	if [ "$$before" != "$$after" ]; then \
	  echo "verify: generated files were stale; make manifests rewrote (review and commit them):"; \
	  { diff <(echo "$$before") <(echo "$$after") || true; } | sed -n 's/^[<>] [0-9a-f]*  /  /p' | sort -u; \
	  git status --porcelain -- config charts; \
	  exit 1; \
	fi; \
	echo "verify: generated files are up to date"
	$(if $(VERIFY_CHART_TEST),$(MAKE) --no-print-directory chart-test,@echo "verify: chart tests left out (VERIFY_CHART_TEST is empty)")

.PHONY: e2e-bin
e2e-bin: testbin release-tool ## Build the Flux controllers and CLI (cached), the add-on's binary and CLI and the release tool for the e2e suite.
	bash hack/build-flux.sh
	CGO_ENABLED=0 $(GO) build -o bin/template-drift-controller ./cmd/template-drift-controller
	CGO_ENABLED=0 $(GO) build -o bin/templatedrift ./cmd/templatedrift

.PHONY: e2e
e2e: e2e-bin ## Run the ginkgo e2e suite: real Flux controllers, clusterctl move, the flux CLI.
	$(GO) test -tags e2e -count=1 -timeout 60m ./e2e/ -v -ginkgo.v $(E2E_ARGS)

.PHONY: helm-controller-bin
helm-controller-bin: testbin ## Build helm-controller only (cached), for `make bench`.
	bash hack/build-flux.sh helm-controller

# The fleet sizes `make bench` measures, each on a fresh control plane, and
# the controllers it measures at each size (the add-on, and helm-controller
# in driftDetection.mode warn for comparison); CI's smoke test is
# BENCH_N=50 with the add-on only, on the kubeadm-metal3 fleet. BENCH_FLEETS
# names the fleet shapes (test/scale/fleets.go: which providers' kinds the
# API server serves). test/scale/config.go lists the other BENCH_*
# variables (window, extra controller flags and environment, ...).
BENCH_N ?= 100 300 1000
BENCH_CONTROLLERS ?= template-drift-controller lockdown helm-controller
BENCH_FLEETS ?= full

.PHONY: bench
bench: testbin $(if $(filter helm-controller,$(BENCH_CONTROLLERS)),helm-controller-bin) ## Measure the add-on, and helm-controller in warn mode, on fleets of BENCH_N HelmReleases (one real API server each): one table, JSON in _artifacts/bench/.
	BENCH_N="$(BENCH_N)" BENCH_CONTROLLERS="$(BENCH_CONTROLLERS)" BENCH_FLEETS="$(BENCH_FLEETS)" GO="$(GO)" $(GO) run ./test/scale/cmd/bench

# The preview's figures (docs/benchmarks.md): one release, and a fleet of
# 100 previewed in turn as `preview -A` does, on one real API server with the
# Cluster API and Metal3 managers. Not a CI step: it asserts no time.
.PHONY: bench-preview
bench-preview: testbin ## Time the preview of one release and of a fleet of 100 (real API server and managers).
	$(GO) test ./internal/preview/ -run '^$$' -bench BenchmarkPreview -benchtime 1x -count 3 -timeout 30m

# The soak (test/chaos, scenario soak; docs/reliability.md): SOAK_N releases
# for SOAK_FOR, a drift every few seconds, a SIGKILL of the controller every
# few minutes, one API server restart; it prints the heal times and the
# slopes of the controller's RSS, live heap and goroutines. Not a CI step.
SOAK_N ?= 300
SOAK_FOR ?= 30m
.PHONY: soak
soak: testbin ## Run the soak: SOAK_N releases for SOAK_FOR under drifts, kills and an API server restart; heal times and memory slopes.
	CHAOS_N="$(SOAK_N)" CHAOS_SOAK_FOR="$(SOAK_FOR)" CHAOS_SCENARIOS=soak GO="$(GO)" $(GO) run ./test/chaos/cmd/chaos

# The chaos matrix (test/chaos, docs/reliability.md): eight scenarios, kill,
# restart, compact, race, failover, lossy, tenants and memory, each on a fleet of
# CHAOS_N releases; CHAOS_SCENARIOS picks some of them; those CHAOS_MANAGERS
# names run with the real Cluster API and Metal3 managers and their webhooks
# (claims, CAPM3's finalizer, MachineSets). test/chaos/config.go
# lists the other CHAOS_* variables (seed, memory's rewrites, the soak's
# length, another binary, kept audit logs).
CHAOS_N ?= 200
CHAOS_KILLS ?= 20
CHAOS_RESTARTS ?= 2
CHAOS_SCENARIOS ?= kill restart compact race failover lossy tenants memory
CHAOS_MANAGERS ?= kill race

.PHONY: chaos
chaos: testbin ## Inject faults (SIGKILL, API server restarts, expired watches, a racing writer, leader failover, a lossy API, hostile tenants, kubeconfig rewrites and large releases) while the add-on corrects a fleet, check the invariants, print the matrix.
	CHAOS_N="$(CHAOS_N)" CHAOS_KILLS="$(CHAOS_KILLS)" CHAOS_RESTARTS="$(CHAOS_RESTARTS)" CHAOS_SCENARIOS="$(CHAOS_SCENARIOS)" CHAOS_MANAGERS="$(CHAOS_MANAGERS)" GO="$(GO)" $(GO) run ./test/chaos/cmd/chaos
