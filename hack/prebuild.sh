#!/usr/bin/env bash
# Builds every tool that CI's steps use, in the order they first need them:
# golangci-lint (make vet), etcd, kube-apiserver and the Cluster API and
# Metal3 managers (make test), controller-gen (make verify), promtool (make
# monitoring-test), then the Flux controllers and CLI (make e2e) and
# cyclonedx-gomod (make release-check, beside the e2e).
#
# .ci/run starts it in the background at the lowest CPU priority, so it
# uses the cores that the foreground steps leave idle: module downloads,
# single-threaded links, tests waiting on their control planes. A step that
# needs a tool this script is still building waits for it (claim in
# hack/lib.sh) rather than building it a second time. A tool whose build
# fails here is left to the step that needs it, which builds it again and
# reports the failure; so this script only logs failures and goes on.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

failed=0
for step in "build-tools.sh golangci-lint" build-etcd.sh build-kube.sh fetch-crds.sh build-capi.sh \
  "build-tools.sh controller-gen promtool" build-flux.sh "build-tools.sh cyclonedx-gomod"; do
  # shellcheck disable=SC2086 # a step is a script and its arguments
  bash "$REPO_ROOT/hack/"$step || { log "prebuild: $step failed (the step that needs it builds it again)"; failed=1; }
done
log "prebuild: done"
exit "$failed"
