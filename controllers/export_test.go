package controllers

import (
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/templatedrift/template-drift-controller/internal/release"
)

// WatchRBAC is watchRBAC, for the tests of its watch on a real API server.
var WatchRBAC = watchRBAC

// NewReleaseWarmup is the warm-up Setup adds to the manager, for a test
// that runs it once on a real API server.
func NewReleaseWarmup(helmReleases client.Reader, releases *release.Reader, secrets corev1client.SecretsGetter,
	serviceAccount func(*helmv2.HelmRelease) string) manager.Runnable {
	return &releaseWarmup{log: logr.Discard(), helmReleases: helmReleases, releases: releases, secrets: secrets,
		serviceAccount: serviceAccount, pageSize: 2}
}

// NewSplitCache is the read cache newReadCache builds with
// --object-label-selector, for the tests that build the informers
// themselves.
func NewSplitCache(whole, narrow ctrlcache.Cache, narrowed func(schema.GroupKind) bool) ctrlcache.Cache {
	return &splitCache{whole: whole, narrow: narrow, narrowed: narrowed}
}
