// Package target is how a pass reaches the cluster a HelmRelease deploys
// to, as the identity helm-controller uses there: Targets resolves the
// Target (impersonation, spec.kubeConfig, a client cache), whose Client
// writes and whose Read is the pass's one door for reads.
//
// How a read is served is this package's business alone. Read behaves like
// a live client: a get finds what exists, a list is complete, and under
// impersonation it reads only what the account may. Behind it, the local
// cluster's reads come from informers (CachedReader) holding compact
// objects (Compact, SlimTransform); an impersonated account's come from the
// same informers where one rules review says it may list them
// (ReviewedReader, AccessReviews); the kinds the cluster does not serve are
// remembered (ServedKinds); a read that fails in a way that may pass is
// retried. Nothing in internal/pipeline, internal/plan or internal/apply
// asks which of these served a read.
package target
