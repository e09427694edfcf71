package controllers

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// servedKindsSettle is how long a change to the CustomResourceDefinitions
// settles before the served kinds are asked again: a provider installs or
// removes its CRDs together, and a new CRD is served a moment after it is
// created.
const servedKindsSettle = 2 * time.Second

// servedKindsRetry paces a failed refresh: the served kinds stay as they
// were, and are asked again after it.
const servedKindsRetry = 30 * time.Second

// servedKinds keeps what the controller believes the local cluster serves
// in step with its CustomResourceDefinitions, through a metadata-only
// informer of them: a CRD's name is `<plural>.<group>`, which is all it
// needs, and a whole CRD holds its schemas (hundreds of KiB for Cluster
// API's). It was chosen over looking again on an interval because it
// costs nothing in the steady state, and a provider installed after the
// add-on is used from the next pass on, not minutes later.
//
// When a CRD of a group the add-on reads appears, changes or goes, it
// forgets the server's remembered answers to dry-runs (a new schema or
// version changes what the server stores) and which kinds were not served (the mapper then asks discovery once
// per kind), asks again which kinds to read from informers and watch (with
// the same access reviews as at start), removes the informers of kinds
// that went, whose reflectors would otherwise fail for ever, and lets the
// watches of kinds that came start on their next read.
type servedKinds struct {
	log     logr.Logger
	groups  map[string]bool
	mapper  *target.ServedKinds
	cache   ctrlcache.Cache
	reader  *target.CachedReader
	watches *kindWatches
	// resolve asks the API server which kinds to read and watch
	// (ResolveWatchKinds).
	resolve func(context.Context) (WatchKinds, error)
	// forget, when set, drops what was learnt from the server's answers
	// under the old schemas (the targets' DryRunMemo).
	forget func()

	mu    sync.Mutex
	ctx   context.Context
	timer *time.Timer
}

// servedGroups returns the API groups of every kind a pass may read: a CRD
// of another group changes nothing the add-on knows.
func servedGroups(kinds *manifest.KindMatcher) map[string]bool {
	out := map[string]bool{manifest.ClusterKind.Group: true}
	for _, gk := range manifest.UserKinds() {
		out[gk.Group] = true
	}
	for gk := range readOnlyKinds {
		out[gk.Group] = true
	}
	for _, g := range kinds.Groups() {
		out[g] = true
	}
	return out
}

// start registers the handler on the cache's informer of CRDs; the cache
// starts it with the manager. The CRDs of the initial list change nothing:
// the kinds were resolved just before.
func (s *servedKinds) start(ctx context.Context) error {
	s.ctx = ctx
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	inf, err := s.cache.GetInformer(ctx, crd, ctrlcache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("failed to watch CustomResourceDefinitions: %w", err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if !initial {
				s.changed(obj)
			}
		},
		UpdateFunc: func(old, obj any) {
			if o, n, ok := metaPair(old, obj); ok && o.GetResourceVersion() != n.GetResourceVersion() {
				s.changed(obj)
			}
		},
		DeleteFunc: s.changed,
	})
	if err != nil {
		return fmt.Errorf("failed to handle CustomResourceDefinition events: %w", err)
	}
	return nil
}

// changed schedules a refresh when obj, a CRD, is of a group the add-on
// reads.
func (s *servedKinds) changed(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	o, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if _, group, _ := strings.Cut(o.GetName(), "."); !s.groups[group] {
		return
	}
	s.schedule(servedKindsSettle)
}

// schedule runs refresh after d, once for any number of calls before then.
func (s *servedKinds) schedule(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer == nil {
		s.timer = time.AfterFunc(d, s.refresh)
	}
}

// refresh asks the API server again which kinds it serves and the
// controller may read, and brings the mapper, the read cache and the
// watches in step.
func (s *servedKinds) refresh() {
	s.mu.Lock()
	s.timer = nil
	s.mu.Unlock()
	if s.ctx.Err() != nil {
		return
	}
	if err := s.mapper.Reset(); err != nil {
		s.log.Error(err, "Cannot reset the REST mapper after a CustomResourceDefinition changed; trying again", "retryIn", servedKindsRetry.String())
		s.schedule(servedKindsRetry)
		return
	}
	if s.forget != nil {
		s.forget()
	}
	// Learn what the cluster serves now, so that no pass pays for it.
	for _, gk := range manifest.UserKinds() {
		_, _ = s.mapper.RESTMapping(gk)
	}
	kinds, err := s.resolve(s.ctx)
	if err != nil {
		s.log.Error(err, "Cannot resolve the served kinds after a CustomResourceDefinition changed; trying again", "retryIn", servedKindsRetry.String())
		s.schedule(servedKindsRetry)
		return
	}
	if s.reader != nil {
		for _, gvk := range s.reader.SetKinds(kinds.Read) {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			if err := s.cache.RemoveInformer(s.ctx, u); err != nil {
				s.log.Error(err, "Cannot remove the informer of a kind no longer served", "kind", gvk.String())
			}
		}
	}
	if s.watches != nil {
		s.watches.setKinds(kinds.Watch)
	}
	s.log.Info("Served kinds changed", "watch", fmt.Sprint(kinds.Watch), "read", fmt.Sprint(kinds.Read))
}

// metaPair returns old and obj as objects.
func metaPair(old, obj any) (metav1.Object, metav1.Object, bool) {
	o, ok1 := old.(metav1.Object)
	n, ok2 := obj.(metav1.Object)
	return o, n, ok1 && ok2
}
