#!/usr/bin/env bash
# The shared module: one throw-away Go module from which hack/build-capi.sh
# builds the Cluster API managers and hack/build-flux.sh builds
# helm-controller, kustomize-controller, source-controller,
# notification-controller and the flux CLI. Sourced by both; not run on its
# own.
#
# Why one module: these eight binaries all stand on Kubernetes v0.36 and
# controller-runtime v0.24. Built each from its own go.mod, every build
# compiled its own copy of client-go, the Kubernetes API types and
# controller-runtime at slightly different patch versions, because Go's
# build cache only reuses a compiled package when its source and all of its
# dependencies are the same. From one go.mod, minimal version selection
# picks one version of every shared dependency (the highest any of them
# requires: patch versions at most), so the second and later builds reuse
# what the first compiled. Each binary is still built from its own released
# source; only its shared dependencies may be a patch version newer than its
# own go.mod says. CAPM3 stays apart: it requires Cluster API v1.13 and
# Kubernetes v0.35.
#
# Each build script makes its own copy of the module (same go.mod, so the
# same compiled packages); the copies differ in nothing that a compile sees.
#
# Neither the controllers nor Cluster API can be `go install`ed: their go.mod
# replaces the /api sub-module with ./api, which their module zip does not
# hold. Here the /api modules are required at the same version, and a
# dependency's replace directives do not apply to the main module, so the
# non-local ones are copied (shared_replaces).

# bind_webhooks_from_env FILE : make the manager's webhook server bind to
# $TDC_WEBHOOK_HOST. No manager has a flag for the bind address, and
# controller-runtime listens on every interface by default; the tests set it
# to 127.0.0.1 (unset, the upstream behaviour is unchanged). Exactly one
# webhook.Options literal must be patched, or the build stops.
bind_webhooks_from_env() {
  local file=$1
  perl -0pi -e 's/(webhook\.Options\{\s*?\n(\s*))Port:(\s*)webhookPort,/$1Host: os.Getenv("TDC_WEBHOOK_HOST"),\n$2Port:$3webhookPort,/g' "$file"
  [[ $(grep -c 'Host: os.Getenv("TDC_WEBHOOK_HOST")' "$file") == 1 ]] \
    || die "cannot patch the webhook bind address into $file"
}

# module_dir MODULE VERSION : download MODULE@VERSION, print its source folder.
module_dir() {
  local dir
  dir="$(GOWORK=off GOFLAGS= go mod download -json "$1@$2" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  [[ -d $dir ]] || die "cannot download $1@$2"
  printf '%s\n' "$dir"
}

# writable_copy MODULE VERSION DIR : copy MODULE@VERSION's source into DIR.
writable_copy() {
  local src
  src="$(module_dir "$1" "$2")"
  cp -R "$src" "$3" && chmod -R u+w "$3"
}

# The replace directives of the shared module. go-digest: helm-controller and
# source-controller each pin an unreleased commit; the newer one (helm-
# controller's) serves both. kustomize: helm-controller pins v0.21.1.
# pkg/artifact v0.18.3 (required by source-controller v1.9.5) is refused by
# the module proxy; v0.18.0 builds and works (the replace names the refused
# version, so it has no effect once a newer one is required). tablewriter:
# Cluster API requires v1.1, whose API the flux CLI (v0.0.5) does not compile
# against; no binary built here but the flux CLI imports it.
shared_replaces() {
  cat <<'EOF'
replace github.com/opencontainers/go-digest => github.com/opencontainers/go-digest v1.0.1-0.20231025023718-d50d2fec9c98
replace sigs.k8s.io/kustomize/api => sigs.k8s.io/kustomize/api v0.21.1
replace sigs.k8s.io/kustomize/kyaml => sigs.k8s.io/kustomize/kyaml v0.21.1
replace gopkg.in/yaml.v3 => gopkg.in/yaml.v3 v3.0.1
replace github.com/fluxcd/pkg/artifact v0.18.3 => github.com/fluxcd/pkg/artifact v0.18.0
replace github.com/olekukonko/tablewriter => github.com/olekukonko/tablewriter v0.0.5
EOF
}

# The main packages of the shared module, as tools.go imports them.
SHARED_MAINS=(
  github.com/fluxcd/helm-controller
  github.com/fluxcd/kustomize-controller
  github.com/fluxcd/source-controller
  github.com/fluxcd/notification-controller
  github.com/fluxcd/flux2/v2/cmd/flux
  sigs.k8s.io/cluster-api/core
  sigs.k8s.io/cluster-api/bootstrap/kubeadm
  sigs.k8s.io/cluster-api/controlplane/kubeadm
)

# shared_module DIR : write the shared module into DIR (a new folder) and
# resolve its dependencies. Cluster API's copy is patched as the tests need
# (bind_webhooks_from_env); the flux CLI's copy gets a placeholder for the
# install manifests that upstream generates with a networked kustomize step
# (so `flux install` and `flux bootstrap` need --manifests; every other
# command is unaffected).
shared_module() {
  local dir=$1 pkg v
  for v in HELM_CONTROLLER_VERSION KUSTOMIZE_CONTROLLER_VERSION FLUX_SOURCE_CONTROLLER_VERSION NOTIFICATION_CONTROLLER_VERSION \
    FLUX_CLI_VERSION CAPI_VERSION; do
    [[ -n ${!v:-} ]] || die "no $v in hack/versions.env"
  done
  mkdir -p "$dir"
  writable_copy sigs.k8s.io/cluster-api "$CAPI_VERSION" "$dir/cluster-api"
  for pkg in core bootstrap/kubeadm controlplane/kubeadm; do
    bind_webhooks_from_env "$dir/cluster-api/$pkg/main.go"
  done
  writable_copy github.com/fluxcd/flux2/v2 "$FLUX_CLI_VERSION" "$dir/flux2"
  local embed
  embed="$(grep -h '^//go:embed' "$dir"/flux2/cmd/flux/*.go || true)"
  [[ $embed == "//go:embed manifests/*.yaml" ]] \
    || die "cmd/flux of flux2 $FLUX_CLI_VERSION embeds '${embed:-nothing}', expected '//go:embed manifests/*.yaml': update hack/shared-module.sh"
  mkdir -p "$dir/flux2/cmd/flux/manifests"
  cat >"$dir/flux2/cmd/flux/manifests/placeholder.yaml" <<'YAML'
# Placeholder: upstream generates the install manifests embedded here with a
# networked kustomize step. Built by hack/build-flux.sh; pass --manifests to
# `flux install` / `flux bootstrap`.
YAML
  {
    echo "module tdc.local/shared"
    echo
    echo "go $(go env GOVERSION | sed 's/^go//')"
    echo
    echo "require ("
    echo "	github.com/fluxcd/helm-controller $HELM_CONTROLLER_VERSION"
    echo "	github.com/fluxcd/helm-controller/api $HELM_CONTROLLER_VERSION"
    echo "	github.com/fluxcd/kustomize-controller $KUSTOMIZE_CONTROLLER_VERSION"
    echo "	github.com/fluxcd/kustomize-controller/api $KUSTOMIZE_CONTROLLER_VERSION"
    echo "	github.com/fluxcd/source-controller $FLUX_SOURCE_CONTROLLER_VERSION"
    echo "	github.com/fluxcd/source-controller/api $FLUX_SOURCE_CONTROLLER_VERSION"
    echo "	github.com/fluxcd/notification-controller $NOTIFICATION_CONTROLLER_VERSION"
    echo "	github.com/fluxcd/notification-controller/api $NOTIFICATION_CONTROLLER_VERSION"
    echo "	github.com/fluxcd/flux2/v2 $FLUX_CLI_VERSION"
    echo "	sigs.k8s.io/cluster-api $CAPI_VERSION"
    echo "	sigs.k8s.io/cluster-api/api $CAPI_VERSION"
    echo ")"
    echo
    echo "replace github.com/fluxcd/flux2/v2 => ./flux2"
    echo "replace sigs.k8s.io/cluster-api => ./cluster-api"
    shared_replaces
  } >"$dir/go.mod"
  {
    echo "//go:build tools"
    echo
    echo "package tools"
    echo
    echo "import ("
    for pkg in "${SHARED_MAINS[@]}"; do echo "	_ \"$pkg\""; done
    echo ")"
  } >"$dir/tools.go"
  # -e: some test-only dependencies of the controllers are refused by the proxy.
  (cd "$dir" && GOWORK=off GOFLAGS= timed "go mod tidy (shared module)" sh -c 'exec go mod tidy -e >tidy.log 2>&1') \
    || { cat "$dir/tidy.log" >&2; die "go mod tidy of the shared module failed"; }
}

# shared_build DIR NAME OUT LDFLAGS PACKAGE : build PACKAGE of the shared
# module in DIR into OUT/NAME, as every tool is built (static, -trimpath).
shared_build() {
  local dir=$1 name=$2 out=$3 ldflags=$4 pkg=$5
  mkdir -p "$out"
  (cd "$dir" && GOWORK=off GOFLAGS= CGO_ENABLED=0 timed "go build $name (shared module)" \
    go build -trimpath -ldflags "$ldflags" -o "$out/$name" "$pkg") \
    || { cat "$dir/go.mod" >&2; die "building $name from the shared module failed (its go.mod above)"; }
}
