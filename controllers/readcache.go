package controllers

import (
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/apply"
)

// newReadCache builds the informers a pass reads the local cluster from,
// when it reads as the controller's own identity (no impersonation): the
// template, consumer and user kinds and the Clusters, in full (they are
// small), in every namespace, the metadata only of Helm's release
// Secrets, selected by Helm's owner=helm label, and the metadata only of
// CustomResourceDefinitions (servedKinds). Secret data is never
// cached. Informers start on a kind's first read; the cache runs with the
// manager. The watches of the template and consumer kinds use the same
// informers (kindWatches). It returns nil, and passes read live, when the
// controller may list and watch none of them.
func newReadCache(mgr ctrl.Manager, kinds WatchKinds, mapper apimeta.RESTMapper) (*apply.CachedReader, ctrlcache.Cache, error) {
	if len(kinds.Read) == 0 && !kinds.SecretMetadata && !kinds.CustomResourceDefinitions {
		return nil, nil, nil
	}
	secretMeta := &metav1.PartialObjectMetadata{}
	secretMeta.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	c, err := ctrlcache.New(mgr.GetConfig(), ctrlcache.Options{
		Scheme: mgr.GetScheme(),
		// The passes' mapper: it remembers the kinds the cluster does not
		// serve, and forgets them when a CRD changes (servedKinds).
		Mapper: mapper,
		// No pass reads managedFields; without them an object takes about
		// half the memory.
		DefaultTransform: ctrlcache.TransformStripManagedFields(),
		ByObject: map[client.Object]ctrlcache.ByObject{
			secretMeta: {Label: labels.SelectorFromSet(labels.Set{"owner": "helm"})},
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("failed to create the read cache: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, nil, fmt.Errorf("failed to run the read cache: %w", err)
	}
	read := map[schema.GroupKind]bool{}
	for _, gk := range kinds.Read {
		read[gk] = true
	}
	return &apply.CachedReader{Cache: c, Live: mgr.GetAPIReader(), Kinds: read, SecretMetadata: kinds.SecretMetadata}, c, nil
}
