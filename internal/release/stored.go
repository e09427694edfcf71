package release

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"helm.sh/helm/v4/pkg/release/common"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Stored is one version of a release in Helm storage, as the labels Helm's
// Secrets storage driver writes on the release's Secret record it (the
// driver keeps "status" current on every update, and its own queries
// select by these labels).
type Stored struct {
	Version int
	// Status is Helm's status of that version, e.g. "deployed",
	// "superseded", "failed", "pending-upgrade".
	Status string
	// UID and ResourceVersion are its Secret's, as listed: GetIn looks
	// the memo up with them instead of reading the Secret's metadata again.
	UID             types.UID
	ResourceVersion string
}

// Stored lists the versions of release name kept in storageNS, newest
// first. It reads Secret metadata only, so nothing is decoded: it is how a
// pass learns whether Helm is acting on the release (a pending version, or
// one newer than status.history names) and which older versions it may
// compare with (PreviousDeployedIn).
func (r *Reader) Stored(ctx context.Context, src Source, storageNS, name string) ([]Stored, error) {
	if src.Meta == nil {
		return nil, fmt.Errorf("failed to list releases of %s/%s: source %q has no metadata reader", storageNS, name, src.Key)
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	err := src.Meta.List(ctx, list, client.InNamespace(storageNS), client.MatchingLabels{"owner": "helm", "name": name})
	if err != nil {
		return nil, fmt.Errorf("failed to list release Secrets of %s/%s: %w", storageNS, name, err)
	}
	var out []Stored
	for _, item := range list.Items {
		v, err := strconv.Atoi(item.Labels["version"])
		if err != nil || item.Name != SecretName(name, v) {
			continue // not a Secret Helm's driver wrote for this release
		}
		out = append(out, Stored{Version: v, Status: item.Labels["status"], UID: item.UID, ResourceVersion: item.ResourceVersion})
	}
	slices.SortFunc(out, func(a, b Stored) int { return b.Version - a.Version })
	return out, nil
}

// PreviousDeployed returns the newest release of name with a version below
// before whose status label is "superseded" or "deployed": the release that
// was deployed before, which the pipeline compares against to tell what an
// upgrade changed. It returns (nil, nil) when storage no longer has one
// (Helm prunes history beyond --history-max). Only that one Secret is
// decoded; candidates come from a metadata-only list (Stored), whose labels
// carry version and status.
func (r *Reader) PreviousDeployed(ctx context.Context, src Source, storageNS, name string, before int) (*Release, error) {
	stored, err := r.Stored(ctx, src, storageNS, name)
	if err != nil {
		return nil, err
	}
	return r.PreviousDeployedIn(ctx, src, storageNS, name, before, stored)
}

// PreviousDeployedIn is PreviousDeployed over a listing Stored returned
// earlier in the same pass, so that the pass lists storage once.
func (r *Reader) PreviousDeployedIn(ctx context.Context, src Source, storageNS, name string, before int, stored []Stored) (*Release, error) {
	for _, v := range deployedVersions(stored, before) {
		rel, err := r.GetIn(ctx, src, storageNS, name, v, stored)
		if errors.Is(err, ErrReleaseNotFound) {
			continue // pruned since the list; try the next older one
		}
		if err != nil {
			return nil, fmt.Errorf("failed to read release deployed before v%d: %w", before, err)
		}
		return rel, nil
	}
	return nil, nil
}

// deployedVersions picks, newest first, the versions below before that are
// labelled superseded or deployed.
func deployedVersions(stored []Stored, before int) []int {
	var versions []int
	for _, s := range stored {
		if s.Version >= before {
			continue
		}
		switch common.Status(s.Status) {
		case common.StatusSuperseded, common.StatusDeployed:
			versions = append(versions, s.Version)
		}
	}
	slices.Sort(versions)
	slices.Reverse(versions)
	return versions
}
