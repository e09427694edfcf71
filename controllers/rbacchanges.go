package controllers

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/templatedrift/template-drift-controller/internal/target"
)

// rbacKinds are the objects whose change may change an account's rights
// under RBAC.
var rbacKinds = []string{"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}

// watchRBAC tells reviews of every change of an RBAC object, through
// metadata-only informers of the four kinds, so that an impersonated
// account's rules are asked again at its next pass after any grant or
// revocation, and kept, in the steady state, for as long as nothing
// changes. It was chosen over a short lifetime of the answers because a
// pass reads at every resync, and asking again every few minutes cost
// 7 reviews a release each time; a watch costs four lists at start and
// nothing after, and sees a revocation at once instead of minutes later.
// Any change drops every account's answers: a binding names its subjects
// and a role its rules, and telling which accounts a change reaches is
// what the API server's authorizer is for.
//
// It does nothing when the controller may not list and watch the four
// kinds cluster-wide (the answers are then kept for --access-review-ttl),
// and logs so once.
func watchRBAC(ctx context.Context, log logr.Logger, cs kubernetes.Interface, cache ctrlcache.Cache, reviews *target.AccessReviews) error {
	resources := map[string]string{"Role": "roles", "RoleBinding": "rolebindings", "ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings"}
	for _, kind := range rbacKinds {
		var ok bool
		// A failure that may pass is asked again (RetryStartup): this runs
		// at start, and an error here stops the controller.
		err := RetryStartup(func() (err error) {
			ok, err = mayWatch(ctx, cs, rbacv1.GroupName, resources[kind])
			return err
		})
		if err != nil {
			return err
		}
		if !ok {
			log.Info("not watching RBAC objects: the controller may not list and watch " + resources[kind] +
				"; access reviews are kept for --access-review-ttl")
			return nil
		}
	}
	var synced []toolscache.InformerSynced
	changed := func(any) { reviews.RBACChanged() }
	for _, kind := range rbacKinds {
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind(kind))
		inf, err := cache.GetInformer(ctx, obj, ctrlcache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("failed to watch %s: %w", resources[kind], err)
		}
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj any, initial bool) {
				if !initial {
					changed(obj)
				}
			},
			UpdateFunc: func(old, obj any) {
				if o, n, ok := metaPair(old, obj); ok && o.GetResourceVersion() != n.GetResourceVersion() {
					changed(obj)
				}
			},
			DeleteFunc: changed,
		})
		if err != nil {
			return fmt.Errorf("failed to handle %s events: %w", resources[kind], err)
		}
		synced = append(synced, reg.HasSynced)
	}
	reviews.WatchRBAC(func() bool {
		for _, s := range synced {
			if !s() {
				return false
			}
		}
		return true
	})
	return nil
}
