package testenv

import (
	"context"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/release/common"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/release"
)

// Release describes a Helm release to store as helm-controller would.
type Release struct {
	Name, Namespace, StorageNamespace string
	Version                           int
	// Status is a Helm status ("deployed", "failed", "superseded", ...).
	Status string
	// ApplyMethod is "ssa", "csa" or "" (a Helm 3 release).
	ApplyMethod string
	Manifest    string
}

// HelmRelease returns the Helm v4 release object for r.
func (r Release) HelmRelease() *helmv1.Release {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return &helmv1.Release{
		Name:      r.Name,
		Namespace: r.Namespace,
		Version:   r.Version,
		Info: &helmv1.Info{
			Status: common.Status(r.Status), FirstDeployed: now, LastDeployed: now.Add(time.Duration(r.Version) * time.Minute),
			Description: "written by internal/testenv",
		},
		Chart:       &chart.Chart{Metadata: &chart.Metadata{Name: "cluster", Version: "1.0.0", APIVersion: "v2"}},
		Config:      map[string]any{"fixture": true},
		Manifest:    r.Manifest,
		ApplyMethod: r.ApplyMethod,
	}
}

// StoreRelease writes r with Helm v4's Secrets storage driver, exactly the
// records helm-controller leaves. Tests only: the controller never writes
// release Secrets. Helm's storage driver takes no context, so the first
// argument is unused; it stays for symmetry with the other helpers.
func StoreRelease(_ context.Context, e *Env, r Release) error {
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return fmt.Errorf("failed to create clientset: %w", err)
	}
	ns := r.StorageNamespace
	if ns == "" {
		ns = r.Namespace
	}
	st := storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(ns)))
	rel := r.HelmRelease()
	if _, err := st.Get(r.Name, r.Version); err == nil {
		return st.Update(rel)
	}
	return st.Create(rel)
}

// SetHistory records r as the latest snapshot in hr's status.history, through
// the status subresource, with the digest helm-controller computes.
func SetHistory(ctx context.Context, c client.Client, hr *helmv2.HelmRelease, r Release) error {
	return RecordRelease(ctx, c, hr, r.HelmRelease())
}

// RecordRelease records rel as the latest snapshot in hr's status.history,
// through the status subresource, as helm-controller records a release it
// installed or upgraded (with its digest).
func RecordRelease(ctx context.Context, c client.Client, hr *helmv2.HelmRelease, rel *helmv1.Release) error {
	snap := &helmv2.Snapshot{
		APIVersion: helmv2.CurrentSnapshotAPIVersion,
		Name:       rel.Name, Namespace: rel.Namespace, Version: rel.Version, Status: rel.Info.Status.String(),
		Digest:        release.SnapshotDigest(rel),
		ChartName:     rel.Chart.Metadata.Name,
		ChartVersion:  rel.Chart.Metadata.Version,
		ConfigDigest:  "sha256:0000000000000000000000000000000000000000000000000000000000000000",
		FirstDeployed: metav1.NewTime(rel.Info.FirstDeployed),
		LastDeployed:  metav1.NewTime(rel.Info.LastDeployed),
	}
	base := hr.DeepCopy()
	hr.Status.History = append(helmv2.Snapshots{snap}, hr.Status.History...)
	return c.Status().Patch(ctx, hr, client.MergeFrom(base))
}
