package preview

import (
	"context"
	"errors"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/go-logr/logr"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/plan"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/render"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// Request is one preview: a proposed HelmRelease against the live cluster.
type Request struct {
	// HelmRelease is the HelmRelease as proposed: the live one with the
	// change applied (values, valuesFrom, post-renderers, names).
	HelmRelease *helmv2.HelmRelease
	// Chart is the proposed chart; nil is the one the stored release keeps.
	Chart *chart.Chart
	// Local reads the HelmRelease's valuesFrom (its own cluster).
	Local client.Client
	// Target and TargetConfig reach the cluster the release deploys to.
	// Every request with a write verb sent through Target is a dry-run.
	Target       client.Client
	TargetConfig *rest.Config
	// Cluster, when set, is shared by the previews of a fleet on the
	// target (render.NewCluster).
	Cluster *render.Cluster
	// Kinds are the template kinds (--template-kinds).
	Kinds *manifest.KindMatcher
	// Now is the preview's clock, for rollout-after times.
	Now time.Time
	// Rollouts is the controller's rollout policy for a release that sets
	// none (its --rollouts; "" is deny).
	Rollouts plan.RolloutPolicy
	// New: the HelmRelease is not on the cluster, so it has no stored
	// release; Run previews its install, of Chart (which it needs).
	New bool
}

// Run renders the proposed upgrade as helm-controller would, asks the
// server what it would do to each object the new manifest has or drops,
// with dry-runs only, and says what each answer means: a refusal fails the
// upgrade, a MachineDeployment or KubeadmControlPlane change may roll
// Machines, a template changed in place reaches only Machines created
// later. It writes nothing.
func Run(ctx context.Context, req Request) (Report, error) {
	hr := req.HelmRelease
	rep := Report{HelmRelease: hr.Namespace + "/" + hr.Name, New: req.New}
	stored, next, err := req.render(ctx)
	if err != nil {
		return rep, err
	}
	rep.Chart = next.Chart.Metadata.Name + "@" + next.Chart.Metadata.Version
	rep.ApplyMethod = next.ApplyMethod
	oldObjs, err := manifest.Split(stored.Manifest, hr.GetReleaseNamespace(), 0)
	if err != nil {
		return rep, fmt.Errorf("the stored release's manifest: %w", err)
	}
	newObjs, err := manifest.Split(next.Manifest, hr.GetReleaseNamespace(), 0)
	if err != nil {
		return rep, fmt.Errorf("the rendered manifest: %w", err)
	}
	old := map[manifest.ID]*unstructured.Unstructured{}
	for _, o := range oldObjs {
		old[manifest.IDOf(o)] = o
	}
	// after is the world the upgrade leaves, for the add-on's pass over it.
	after := map[manifest.ID]*unstructured.Unstructured{}
	// The dry-runs and the add-on's passes look at one world: read it once.
	snap := target.NewSnapshot(req.Target)
	live := snapshotClient{Client: req.Target, snap: snap}
	for _, o := range newObjs {
		id := manifest.IDOf(o)
		a, err := dryRunUpdate(ctx, live, old[id], withOwnership(o, next.Name, next.Namespace), next.ApplyMethod == "ssa")
		if err != nil {
			return rep, err
		}
		delete(old, id)
		if a.refused == nil {
			after[id] = a.after
		}
		obj, err := req.predict(o, a)
		if err != nil {
			return rep, err
		}
		rep.Objects = append(rep.Objects, obj)
	}
	for _, o := range oldObjs {
		if _, dropped := old[manifest.IDOf(o)]; !dropped {
			continue
		}
		a, deletes, err := dryRunDelete(ctx, live, o)
		if err != nil {
			return rep, err
		}
		if !deletes {
			continue
		}
		v, err := plan.JudgeUpgrade(plan.UpgradeFacts{Live: a.live, Refusal: a.refused, Dropped: true})
		if err != nil {
			return rep, err
		}
		if a.refused == nil {
			after[manifest.IDOf(o)] = nil
		}
		rep.Objects = append(rep.Objects, req.objectOf(o, v, a.refused))
	}
	if req.New {
		// The add-on has nothing to look at before the install, and
		// after it the templates are the manifest's.
		rep.AddonMode = string(plan.StartPass(hr.GetAnnotations(), hr.Spec.Suspend, false, req.Rollouts).Options.Mode)
		return rep, nil
	}
	if err := req.foresee(ctx, &rep, next, after, snap); err != nil {
		return rep, err
	}
	return rep, nil
}

// render renders the proposed release: the upgrade of the stored one,
// with its chart unless req.Chart is given; or, for a new HelmRelease, its
// install, from an empty stored release.
func (req Request) render(ctx context.Context) (stored, next *helmv1.Release, err error) {
	hr := req.HelmRelease
	if req.New {
		if req.Chart == nil {
			return nil, nil, errors.New("it is new: with no stored release to take the chart from, pass its chart with --chart")
		}
		stored = &helmv1.Release{}
	} else if stored, err = lastRelease(req.TargetConfig, hr); err != nil {
		return nil, nil, err
	}
	ch := req.Chart
	if ch == nil {
		ch = stored.Chart
	}
	values, err := render.Values(ctx, logr.Discard(), req.Local, hr)
	if err != nil {
		return nil, nil, err
	}
	r := render.Request{HelmRelease: hr, Chart: ch, Values: values, Target: req.TargetConfig, Cluster: req.Cluster}
	if req.New {
		next, err = render.Install(ctx, r)
	} else {
		next, err = render.Render(ctx, r)
	}
	return stored, next, err
}

// lastRelease reads the release an upgrade would start from, with Helm's
// storage driver (read only).
func lastRelease(cfg *rest.Config, hr *helmv2.HelmRelease) (*helmv1.Release, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to reach the target cluster: %w", err)
	}
	name := release.Name(hr)
	last, err := storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(hr.GetStorageNamespace()))).Last(name)
	if err != nil {
		return nil, fmt.Errorf("failed to read release %s/%s (a preview needs an installed release): %w", hr.GetStorageNamespace(), name, err)
	}
	rel, ok := last.(*helmv1.Release)
	if !ok || rel.Chart == nil {
		return nil, fmt.Errorf("release %s/%s keeps no chart of API v2", hr.GetStorageNamespace(), name)
	}
	return rel, nil
}

// predict says what the server's answer a means for the object the new
// manifest renders as o (plan.JudgeUpgrade), and counts the Machines of a
// consumer that rolls (plan.CountMachines, as the controller counts them).
func (req Request) predict(o *unstructured.Unstructured, a applied) (Object, error) {
	v, err := plan.JudgeUpgrade(plan.UpgradeFacts{Live: a.live, After: a.after, Refusal: a.refused,
		Template: req.Kinds.Match(o.GroupVersionKind().GroupKind()), Now: req.Now})
	if err != nil {
		return Object{}, err
	}
	obj := req.objectOf(o, v, a.refused)
	if v.Change == plan.UpgradeUpdate {
		obj.Changes, obj.MoreChanges = fieldChanges(a.live, a.after)
	}
	if !v.Rollout.Rolls {
		return obj, nil
	}
	if m := plan.CountMachines(a.live); m.Known {
		obj.Machines = &m.N
	}
	return obj, nil
}

func (req Request) objectOf(o *unstructured.Unstructured, v plan.UpgradeEffect, refusal error) Object {
	obj := Object{Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(), Change: string(v.Change), Fails: v.Fails,
		Rolls: v.Rollout.Rolls, Reasons: v.Rollout.Reasons, Note: v.Note,
		id: manifest.IDOf(o), template: req.Kinds.Match(o.GroupVersionKind().GroupKind())}
	if refusal != nil {
		obj.Message = refusal.Error()
	}
	return obj
}

// snapshotClient is the target's client whose reads come from one
// snapshot (target.Snapshot); its writes, dry-runs all, go to the server.
type snapshotClient struct {
	client.Client
	snap *target.Snapshot
}

func (c snapshotClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.snap.Get(ctx, key, obj, opts...)
}

func (c snapshotClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.snap.List(ctx, list, opts...)
}
