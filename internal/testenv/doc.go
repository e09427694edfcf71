// Package testenv starts real Kubernetes control planes (kube-apiserver and
// etcd, built from the Go module proxy by hack/) for integration and e2e tests.
//
// It owns the set of CRDs every test cluster gets: Flux's HelmRelease and the
// Cluster API CRDs, read from copies of their Go modules that hack/fetch-crds.sh
// leaves in bin/, plus two fixture CRDs of the project's own (embedded from
// crds/): a provider that locks its whole template (a CEL rule stands for its
// webhook) and RKE2's control plane in every served version.
//
// With Options.Managers, a control plane also runs the real Cluster API
// (core, kubeadm bootstrap, kubeadm control plane) and Metal3 (CAPM3)
// managers as processes, with the providers' own CRDs and their conversion,
// defaulting and validating webhooks served on 127.0.0.1 with a throw-away
// CA (managers.go): the locks, conversions, finalizers and MachineSets the
// tests meet are the providers' own. Every test that creates Metal3 objects
// uses it. Nothing is read from outside the repository and the Go module
// cache.
//
// Several environments can run at once; the e2e pivot needs a bootstrap and a
// management cluster side by side.
package testenv
