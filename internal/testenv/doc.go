// Package testenv starts real Kubernetes control planes (kube-apiserver and
// etcd, built from the Go module proxy by hack/) for integration and e2e tests.
//
// It owns the set of CRDs every test cluster gets: Flux's HelmRelease and the
// Cluster API CRDs, read from copies of their Go modules that hack/fetch-crds.sh
// leaves in bin/crds, plus the project's own fixture CRDs (embedded from
// crds/), which reproduce the mutability rules of Metal3, a locking provider
// and RKE2. Nothing is read from outside the repository and the Go module cache.
//
// Several environments can run at once; the e2e pivot needs a bootstrap and a
// management cluster side by side.
package testenv
