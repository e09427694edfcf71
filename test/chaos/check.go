package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

// The race scenario's own invariants.
const (
	// InvNoLoop: the add-on made at most one stored write to an object the
	// other writer set back for each of its set-backs, plus the first
	// correction.
	InvNoLoop = "no-loop"
	// InvNoLostUpdate: no release reports TemplatesInSync=True while an
	// object the other writer set back still carries its value.
	InvNoLostUpdate = "no-lost-update"
)

// liveKinds are every kind of the fixture chart's templates and consumers,
// at the versions the chart renders.
var liveKinds = []schema.GroupVersionKind{
	m3mtGVK, kcpGVK,
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "LockedMachineTemplate"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3DataTemplate"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmConfigTemplate"},
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineDeployment"},
}

// auditFlush is how long the last requests are given to reach the audit
// log.
const auditFlush = 2 * time.Second

// check checks the live state and the audit log against the invariants.
func (r *run) check(ctx context.Context) error {
	r.res.Checked = append([]string{}, Invariants...)
	var objs []unstructured.Unstructured
	for _, gvk := range liveKinds {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.env.Client.List(ctx, l); err != nil {
			return fmt.Errorf("failed to list %s: %w", gvk.Kind, err)
		}
		objs = append(objs, l.Items...)
	}
	for _, v := range CheckLive(objs, r.fleet) {
		r.res.violate(v.Invariant, v.What)
	}
	if err := r.checkOwnExits(); err != nil {
		return err
	}
	end := time.Now()
	if err := harness.Sleep(ctx, auditFlush); err != nil {
		return err
	}
	writes, err := ReadWrites(r.auditLog, ControllerUser)
	if err != nil {
		return err
	}
	scope := NewScope(r.fleet.Objects, "cluster")
	if r.scenario == ScenarioFailover {
		scope = scope.WithLease(runtimeNamespace, leaseName)
	}
	scope = scope.WithStatusOf(sortedKeys(r.extras)...)
	for _, v := range CheckWrites(writes, scope) {
		r.res.violate(v.Invariant, v.What)
	}
	counts, err := scale.CountRequests(r.auditLog, ControllerUser, scale.Window{Start: r.started.Add(-time.Second), End: end})
	if err != nil {
		return err
	}
	r.res.Requests, r.res.Writes = counts[0].Total, counts[0].Writes()
	if r.fleet.Managers {
		if err := r.checkManagers(ctx, writes); err != nil {
			return err
		}
	}
	if r.proxy != nil {
		c := r.proxy.Counts()
		r.res.Proxy = &c
	}
	switch r.scenario {
	case ScenarioRace, ScenarioKill:
		return r.checkRace(ctx, writes)
	case ScenarioSoak:
		r.res.Checked = append(r.res.Checked, InvHealed)
		return r.checkRace(ctx, writes)
	case ScenarioCompact:
		if err := r.checkRelisted(); err != nil {
			return err
		}
		return r.checkRace(ctx, writes)
	case ScenarioTenants:
		return r.checkTenants(ctx)
	case ScenarioMemory:
		return r.checkMemory(ctx)
	case ScenarioFailover:
		r.res.Checked = append(r.res.Checked, InvTakeover, InvNoDoubleWrite)
	case ScenarioLossy:
		r.res.Checked = append(r.res.Checked, InvNoDoubleWrite)
		if r.faultFree != nil {
			r.res.Checked = append(r.res.Checked, InvNoRetryStorm)
			for _, v := range CheckRetryStorm(r.res, *r.faultFree) {
				r.res.violate(v.Invariant, v.What)
			}
		}
	}
	if slices.Contains(r.res.Checked, InvNoDoubleWrite) {
		for _, v := range DoubleWrites(writes) {
			r.res.violate(v.Invariant, v.What)
		}
	}
	return nil
}

// checkRace checks the invariants of the scenarios where another writer
// changes objects (race, and kill, which drifts objects afresh before each
// kill): no loop (from the audit log) and no lost update (from the live
// objects and conditions).
func (r *run) checkRace(ctx context.Context, writes []Write) error {
	r.res.Checked = append(r.res.Checked, InvNoLoop, InvNoLostUpdate)
	keys := map[string]bool{}
	for _, t := range r.raceTargets {
		keys[scopeKey(t.key.Namespace, resourceOf(t.key.Kind), t.key.Name)] = true
	}
	corrections := StoredWritesTo(writes, keys)
	for _, k := range sortedKeys(keys) {
		r.res.Corrections += corrections[k]
		if corrections[k] > r.raced[k]+1 {
			r.res.violate(InvNoLoop, fmt.Sprintf("%s: %d stored writes of the add-on for %d set-backs and the first correction", k, corrections[k], r.raced[k]))
		}
	}
	for _, t := range r.raceTargets {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(t.gvk)
		if err := r.env.Client.Get(ctx, client.ObjectKey{Namespace: t.key.Namespace, Name: t.key.Name}, u); err != nil {
			return fmt.Errorf("failed to read %s: %w", t.key, err)
		}
		if stillSetBack(u) {
			hr := &helmv2.HelmRelease{}
			if err := r.env.Client.Get(ctx, client.ObjectKey{Namespace: t.key.Namespace, Name: "cluster"}, hr); err != nil {
				return err
			}
			if c := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition); c != nil && c.Status == metav1.ConditionTrue {
				r.res.violate(InvNoLostUpdate, fmt.Sprintf("%s still carries the other writer's value, and its release reports %s", t.key, c.Reason))
			}
		}
	}
	return nil
}

// stillSetBack reports whether u carries the other writer's value: the
// bootstrap image server, or a reference to the original locked template.
func stillSetBack(u *unstructured.Unstructured) bool {
	if u.GetKind() == m3mtGVK.Kind {
		url, _, _ := unstructured.NestedString(u.Object, append(imagePath, "url")...)
		return url != "" && url != testenv.Management.ImageURL
	}
	name, _, _ := unstructured.NestedString(u.Object, cpRefPath...)
	return name == "mgmt-cp"
}

// checkOwnExits fails converged for every exit of a controller process on
// its own, from the logs of every process of the run.
func (r *run) checkOwnExits() error {
	logs, err := filepath.Glob(filepath.Join(r.dir, "*.log"))
	if err != nil {
		return err
	}
	for _, path := range logs {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, e := range OwnExits(string(b)) {
			r.res.violate(InvConverged, fmt.Sprintf("the controller exited on its own (%s): %s", filepath.Base(path), e))
		}
	}
	return nil
}
