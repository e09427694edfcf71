package chaos

import (
	"context"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// The invariants of the scenarios where another writer changes objects
// (race, kill, compact, soak).
const (
	// InvNoLoop: the add-on made at most one stored write to an object the
	// other writer set back for each of its set-backs, plus the first
	// correction.
	InvNoLoop = "no-loop"
	// InvNoLostUpdate: no release reports TemplatesInSync=True while an
	// object the other writer set back still carries its value.
	InvNoLostUpdate = "no-lost-update"
)

// DriftFigures are the figures of a scenario where another writer changes
// objects.
type DriftFigures struct {
	// OtherWrites are the other writer's stored writes (kill's and
	// compact's fresh drifts), Corrections the controller's stored writes
	// to the same objects.
	OtherWrites int `json:"otherWrites"`
	Corrections int `json:"corrections"`
	// Relists is the compact scenario's: the controller's informers' lists
	// after its watches expired, from the audit log.
	Relists int `json:"relists,omitempty"`
}

// drifts are the objects another writer changed in a scenario, and how
// often each.
type drifts struct {
	targets []raceTarget
	// counts are the set-backs stored, by scopeKey.
	counts map[string]int
	fig    DriftFigures
}

func newDrifts() *drifts { return &drifts{counts: map[string]int{}} }

// record counts a stored set-back of t.
func (d *drifts) record(t raceTarget) {
	d.fig.OtherWrites++
	d.counts[scopeKey(t.key.Namespace, resourceOf(t.key.Kind), t.key.Name)]++
	for _, x := range d.targets {
		if x.key == t.key {
			return
		}
	}
	d.targets = append(d.targets, t)
}

// killLead bounds how long before each kill the kill scenario drifts
// objects afresh: the add-on notices a change within about a second, so
// most kills land while it corrects them, not on a fleet at rest.
const killLead = time.Second

// killDrifts is how many objects are drifted afresh each time.
func killDrifts(n int) int { return max(2, n/20) }

// freshImage returns a setter that points a Metal3MachineTemplate at an
// image server of its own for cycle: a value no correction has met before,
// so the add-on's loop guard (a correction written once and set back to
// the same value) does not stop it.
func freshImage(cycle int) func(u *unstructured.Unstructured) bool {
	url := fmt.Sprintf("http://192.0.2.%d/images/cycle-%d.qcow2", cycle%250+1, cycle)
	return func(u *unstructured.Unstructured) bool {
		img, _, _ := unstructured.NestedStringMap(u.Object, imagePath...)
		if img["url"] == url {
			return false
		}
		_ = unstructured.SetNestedField(u.Object, url, append(imagePath, "url")...)
		_ = unstructured.SetNestedField(u.Object, url+".sha256sum", append(imagePath, "checksum")...)
		return true
	}
}

// driftAfresh drifts killDrifts objects of w's fleet for cycle: the
// workers' Metal3MachineTemplate of in-place releases (to a fresh image
// server) and the KubeadmControlPlane of rotate releases (back to the
// original locked template, as a Helm upgrade would), picked at random.
func (d *drifts) driftAfresh(ctx context.Context, w *world, cycle int) error {
	all := raceTargetsOf(w.fleet, w.in.N)
	for range killDrifts(w.in.N) {
		t := all[w.rng.IntN(len(all))]
		if t.gvk == m3mtGVK {
			t.setBack = freshImage(cycle)
		}
		ok, err := setBack(ctx, w.env.Client, t)
		if err != nil {
			return err
		}
		if ok {
			d.record(t)
		}
	}
	return nil
}

// unhealed counts the drifted objects that still carry the drift.
func (d *drifts) unhealed(ctx context.Context, w *world) (int, error) {
	n := 0
	for _, t := range d.targets {
		u, err := t.read(ctx, w.env.Client)
		if err != nil {
			return 0, err
		}
		if stillSetBack(u) {
			n++
		}
	}
	return n, nil
}

// check checks no loop (from the audit log's writes) and no lost update
// (from the live objects and conditions), and records the figures.
func (d *drifts) check(ctx context.Context, w *world, writes []Write) error {
	w.res.Checked = append(w.res.Checked, InvNoLoop, InvNoLostUpdate)
	w.res.Drifts = &d.fig
	keys := map[string]bool{}
	for _, t := range d.targets {
		keys[scopeKey(t.key.Namespace, resourceOf(t.key.Kind), t.key.Name)] = true
	}
	corrections := StoredWritesTo(writes, keys)
	for _, k := range sortedKeys(keys) {
		d.fig.Corrections += corrections[k]
		if corrections[k] > d.counts[k]+1 {
			w.res.violate(InvNoLoop, fmt.Sprintf("%s: %d stored writes of the add-on for %d set-backs and the first correction", k, corrections[k], d.counts[k]))
		}
	}
	for _, t := range d.targets {
		u, err := t.read(ctx, w.env.Client)
		if err != nil {
			return err
		}
		if !stillSetBack(u) {
			continue
		}
		hr := &helmv2.HelmRelease{}
		if err := w.env.Client.Get(ctx, client.ObjectKey{Namespace: t.key.Namespace, Name: releaseName}, hr); err != nil {
			return err
		}
		if c := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition); c != nil && c.Status == metav1.ConditionTrue {
			w.res.violate(InvNoLostUpdate, fmt.Sprintf("%s still carries the other writer's value, and its release reports %s", t.key, c.Reason))
		}
	}
	return nil
}

// stillSetBack reports whether u carries the other writer's value: an
// image server other than the management one, or a reference to the
// original locked template.
func stillSetBack(u *unstructured.Unstructured) bool {
	if u.GetKind() == m3mtGVK.Kind {
		url, _, _ := unstructured.NestedString(u.Object, append(imagePath, "url")...)
		return url != "" && url != testenv.Management.ImageURL
	}
	name, _, _ := unstructured.NestedString(u.Object, cpRefPath...)
	return name == "mgmt-cp"
}
