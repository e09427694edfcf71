package controllers

import (
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/go-logr/logr"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
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
