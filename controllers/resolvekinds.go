package controllers

import (
	"github.com/templatedrift/template-drift-controller/internal/plan"

	"context"
	"fmt"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// WatchKinds are the kinds to watch, and those left out because the
// controller may not list and watch them cluster-wide.
type WatchKinds struct {
	Watch     []schema.GroupVersionKind
	Forbidden []schema.GroupVersionKind
	// Read are the group kinds a pass may read from informers: the watched
	// kinds, and the Clusters and the objects that only use templates
	// (MachineSets, Metal3DataClaims, Metal3Data) where the controller may
	// list and watch them cluster-wide.
	Read []schema.GroupKind
	// SecretMetadata is true when the controller may list and watch
	// Secrets cluster-wide: the metadata of Helm's release Secrets is then
	// read from an informer.
	SecretMetadata bool
	// CustomResourceDefinitions is true when the controller may list and
	// watch them: it then learns from their metadata when a kind it reads
	// appears or goes (servedKinds).
	CustomResourceDefinitions bool
}

// readOnlyKinds are read by every pass but never watched for changes.
var readOnlyKinds = map[schema.GroupKind]bool{
	manifest.ClusterKind: true, manifest.MachineSetKind: true,
	manifest.Metal3DataClaimKind: true, manifest.Metal3DataKind: true,
}

// resolveBackoff paces ResolveWatchKinds' retries of a failure that may
// pass: about 20 s in all. The controller runs it once, at start, and
// exits if it fails, so without it one 500 or 429 of an API server that
// sheds load among its thirty-odd requests would stop the controller.
var resolveBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 8, Cap: 8 * time.Second}

// ResolveWatchKinds asks the API server which of the template kinds and
// consumer kinds it serves, at their preferred versions. A kind the
// controller's RBAC does not let it list and watch is left out: a watch on
// it would never sync and would stop the manager. Kinds installed later, or
// left out, are still covered by the periodic resync. A failure that may
// pass (plan.MayPass) is retried with resolveBackoff.
func ResolveWatchKinds(ctx context.Context, cfg *rest.Config, kinds *manifest.KindMatcher) (WatchKinds, error) {
	var out WatchKinds
	err := retry.OnError(resolveBackoff, plan.MayPass, func() error {
		var err error
		out, err = resolveWatchKinds(ctx, cfg, kinds)
		return err
	})
	return out, err
}

func resolveWatchKinds(ctx context.Context, cfg *rest.Config, kinds *manifest.KindMatcher) (WatchKinds, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return WatchKinds{}, fmt.Errorf("failed to create clientset: %w", err)
	}
	lists, err := cs.Discovery().ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return WatchKinds{}, fmt.Errorf("failed to discover API resources: %w", err)
	}
	var out WatchKinds
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			gk := schema.GroupKind{Group: gv.Group, Kind: r.Kind}
			watched := (kinds.Match(gk) || manifest.IsConsumer(gk)) && gk != manifest.MachineSetKind
			if (!watched && !readOnlyKinds[gk]) || strings.Contains(r.Name, "/") {
				continue
			}
			ok, err := mayWatch(ctx, cs, gv.Group, r.Name)
			if err != nil {
				return WatchKinds{}, err
			}
			switch {
			case ok && watched:
				out.Watch = append(out.Watch, gv.WithKind(r.Kind))
				out.Read = append(out.Read, gk)
			case ok:
				out.Read = append(out.Read, gk)
			case watched:
				out.Forbidden = append(out.Forbidden, gv.WithKind(r.Kind))
			}
		}
	}
	if out.SecretMetadata, err = mayWatch(ctx, cs, "", "secrets"); err != nil {
		return WatchKinds{}, err
	}
	if out.CustomResourceDefinitions, err = mayWatch(ctx, cs, "apiextensions.k8s.io", "customresourcedefinitions"); err != nil {
		return WatchKinds{}, err
	}
	return out, nil
}

// mayWatch asks the API server whether this identity may list and watch a
// resource in every namespace.
func mayWatch(ctx context.Context, cs kubernetes.Interface, group, resource string) (bool, error) {
	for _, verb := range []string{"list", "watch"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Group: group, Resource: resource, Verb: verb},
		}}
		res, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return false, fmt.Errorf("failed to review access to %s.%s: %w", resource, group, err)
		}
		if !res.Status.Allowed {
			return false, nil
		}
	}
	return true, nil
}
