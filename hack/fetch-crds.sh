#!/usr/bin/env bash
# Copies the upstream CRDs the tests install (Flux helm-controller,
# kustomize-controller, source-controller and notification-controller, and Cluster API) out of
# their Go modules into bin/crds/<module>/<version>/, so tests read them
# from one fixed place, at the versions hack/versions.env pins.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# One copier at a time: CI's background builds (hack/prebuild.sh) and a step
# may both run this, and two copies into one provider folder collide (one
# removes the folder the other is writing into).
if command -v flock >/dev/null; then
  mkdir -p "$TDC_CACHE_DIR/locks"
  exec {crds_lock}>"$TDC_CACHE_DIR/locks/fetch-crds.lock"
  flock "$crds_lock"
fi

fetch() { # NAME MODULE VERSION FILE...
  local name=$1 module=$2 version=$3; shift 3
  local dst="$BIN_DIR/crds/$name/$version" f missing=0
  for f in "$@"; do [[ -f "$dst/$(basename "$f")" ]] || missing=1; done
  if [[ $missing == 0 ]]; then
    log "CRDs of $module@$version: already in $dst"
    return
  fi
  local dir
  dir="$(cd "$(mktemp -d)" && go mod download -json "$module@$version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  [[ -d "$dir" ]] || die "cannot download $module@$version"
  mkdir -p "$dst"
  for f in "$@"; do
    [[ -f "$dir/$f" ]] || die "$module@$version has no $f"
    cp -f "$dir/$f" "$dst/"
    chmod 0644 "$dst/$(basename "$f")"
  done
  log "CRDs of $module@$version: copied $# files to $dst"
}

fetch helm-controller github.com/fluxcd/helm-controller "$HELM_CONTROLLER_VERSION" \
  config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml

fetch cluster-api sigs.k8s.io/cluster-api "$CAPI_VERSION" \
  core/config/crd/bases/cluster.x-k8s.io_clusters.yaml \
  core/config/crd/bases/cluster.x-k8s.io_machinedeployments.yaml \
  core/config/crd/bases/cluster.x-k8s.io_machinesets.yaml \
  core/config/crd/bases/cluster.x-k8s.io_machines.yaml \
  controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanes.yaml \
  bootstrap/kubeadm/config/crd/bases/bootstrap.cluster.x-k8s.io_kubeadmconfigtemplates.yaml \
  cmd/clusterctl/config/crd/bases/clusterctl.cluster.x-k8s.io_providers.yaml

# preview --kustomization reads Flux Kustomizations; the e2e suite runs the
# real kustomize-controller.
fetch kustomize-controller github.com/fluxcd/kustomize-controller "$KUSTOMIZE_CONTROLLER_VERSION" \
  config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml

# The e2e suite runs the real source-controller, which needs its own CRDs.
fetch source-controller github.com/fluxcd/source-controller "$FLUX_SOURCE_CONTROLLER_VERSION" \
  config/crd/bases/source.toolkit.fluxcd.io_buckets.yaml \
  config/crd/bases/source.toolkit.fluxcd.io_externalartifacts.yaml \
  config/crd/bases/source.toolkit.fluxcd.io_gitrepositories.yaml \
  config/crd/bases/source.toolkit.fluxcd.io_helmcharts.yaml \
  config/crd/bases/source.toolkit.fluxcd.io_helmrepositories.yaml \
  config/crd/bases/source.toolkit.fluxcd.io_ocirepositories.yaml

# ...and the real notification-controller its own: Alerts and Providers
# (v1beta3), Receivers (v1).
fetch notification-controller github.com/fluxcd/notification-controller "$NOTIFICATION_CONTROLLER_VERSION" \
  config/crd/bases/notification.toolkit.fluxcd.io_alerts.yaml \
  config/crd/bases/notification.toolkit.fluxcd.io_providers.yaml \
  config/crd/bases/notification.toolkit.fluxcd.io_receivers.yaml

# The real Cluster API and Metal3 managers (hack/build-capi.sh) serve the
# conversion and admission webhooks of their own CRDs. internal/testenv
# installs each provider's CRDs and webhook configurations from
# bin/providers/<provider>/<version>/{crds/,webhooks.yaml}, rewritten to point
# at the manager it starts. BareMetalHost and the Metal3 IPAM CRDs come from
# the root modules of the versions CAPM3 requires (their api sub-modules ship
# Go types only); no manager serves them.
provider() { # PROVIDER MODULE VERSION CRD_DIR [WEBHOOK_MANIFEST]
  local name=$1 module=$2 version=$3 crds=$4 webhooks=${5:-}
  local dst="$BIN_DIR/providers/$name/$version"
  if [[ -f "$dst/.complete" ]]; then
    log "Provider manifests of $name $version: already in $dst"
    return
  fi
  local dir
  dir="$(cd "$(mktemp -d)" && GONOSUMDB=github.com/metal3-io GOFLAGS= go mod download -json "$module@$version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  [[ -d "$dir/$crds" ]] || die "$module@$version has no $crds"
  rm -rf "$dst" && mkdir -p "$dst/crds"
  cp -f "$dir/$crds"/*.yaml "$dst/crds/"
  if [[ -n $webhooks ]]; then
    [[ -f "$dir/$webhooks" ]] || die "$module@$version has no $webhooks"
    cp -f "$dir/$webhooks" "$dst/webhooks.yaml"
  fi
  chmod -R u+w,a+r "$dst"
  touch "$dst/.complete"
  log "Provider manifests of $name $version: copied to $dst"
}

provider cluster-api sigs.k8s.io/cluster-api "$CAPI_VERSION" \
  core/config/crd/bases core/config/webhook/manifests.yaml
provider bootstrap-kubeadm sigs.k8s.io/cluster-api "$CAPI_VERSION" \
  bootstrap/kubeadm/config/crd/bases bootstrap/kubeadm/config/webhook/manifests.yaml
provider control-plane-kubeadm sigs.k8s.io/cluster-api "$CAPI_VERSION" \
  controlplane/kubeadm/config/crd/bases controlplane/kubeadm/config/webhook/manifests.yaml
provider infrastructure-metal3 github.com/metal3-io/cluster-api-provider-metal3 "$CAPM3_VERSION" \
  config/crd/bases config/webhook/manifests.yaml
provider baremetal-operator github.com/metal3-io/baremetal-operator "$BMO_VERSION" \
  config/base/crds/bases
provider ip-address-manager github.com/metal3-io/ip-address-manager "$IPAM_VERSION" \
  config/crd/bases
