package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

// The race scenario's other writer and what the add-on may answer it.
const (
	// raceTargets bounds the objects of each kind the other writer sets
	// back.
	raceTargets = 20
	// racePause is the other writer's pause between two attempts.
	racePause = 50 * time.Millisecond
	// loopGuardMessage is how the add-on reports a template it corrected in
	// place once for this release and found set back to the same value: it
	// writes nothing more (CorrectedDriftAnnotation), which is the expected
	// non-True outcome of a template the other writer set back.
	loopGuardMessage = "but the server does not keep the value"
)

// The kinds the other writer sets back.
var (
	m3mtGVK = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3MachineTemplate"}
	kcpGVK  = schema.GroupVersionKind{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmControlPlane"}
)

// raceTarget is one object the other writer sets back to what the pivot
// left, whenever it finds the add-on's correction on it.
type raceTarget struct {
	key ObjectKey
	gvk schema.GroupVersionKind
	// setBack reports whether u carries the correction and, if so, sets
	// it back in u.
	setBack func(u *unstructured.Unstructured) bool
}

var imagePath = []string{"spec", "template", "spec", "image"}

// setImageBack puts the bootstrap image server back in a corrected
// Metal3MachineTemplate, as the pivot left it.
func setImageBack(u *unstructured.Unstructured) bool {
	img, _, _ := unstructured.NestedStringMap(u.Object, imagePath...)
	if img["url"] != testenv.Management.ImageURL {
		return false
	}
	_ = unstructured.SetNestedField(u.Object, testenv.Bootstrap.ImageURL, append(imagePath, "url")...)
	_ = unstructured.SetNestedField(u.Object, testenv.Bootstrap.ImageURL+".sha256sum", append(imagePath, "checksum")...)
	return true
}

var cpRefPath = []string{"spec", "machineTemplate", "spec", "infrastructureRef", "name"}

// setRefBack points a repointed KubeadmControlPlane at the original
// template again, as a Helm upgrade of the chart would.
func setRefBack(u *unstructured.Unstructured) bool {
	name, _, _ := unstructured.NestedString(u.Object, cpRefPath...)
	if name == "mgmt-cp" || name == "" {
		return false
	}
	_ = unstructured.SetNestedField(u.Object, "mgmt-cp", cpRefPath...)
	return true
}

// raceTargetsOf picks the workers' Metal3MachineTemplate of the first
// in-place releases and the KubeadmControlPlane of the first rotate
// releases, up to raceTargets of each.
func raceTargetsOf(f Fleet, n int) []raceTarget {
	var out []raceTarget
	var m3mts, kcps int
	for i := range n {
		ns := scale.Namespace(i)
		switch {
		case f.Cases[ns] == CaseInPlace && m3mts < raceTargets:
			out = append(out, raceTarget{ObjectKey{ns, m3mtGVK.Kind, "mgmt-md0"}, m3mtGVK, setImageBack})
			m3mts++
		case f.Cases[ns] == CaseRotate && kcps < raceTargets:
			out = append(out, raceTarget{ObjectKey{ns, kcpGVK.Kind, "mgmt-cp"}, kcpGVK, setRefBack})
			kcps++
		}
	}
	return out
}

// raceFor is how long the other writer of the race scenario runs from its
// first set-back: long enough for several rounds of set-back and correction
// on every target.
const raceFor = 20 * time.Second

// RaceSpec has another writer set objects back (raceTargetsOf) for raceFor
// from its first set-back while the add-on corrects, then checks, after
// convergence, that the add-on lost no update and looped on none.
func RaceSpec(ctx context.Context, in Input) (res Result, err error) {
	d := newDrifts()
	raced := map[string]bool{}
	w := newWorld(in, ScenarioRace, worldOptions{accept: func(hr *helmv2.HelmRelease, c *metav1.Condition) bool {
		return raced[hr.Namespace] && c.Reason == api.CorrectionFailedReason && strings.Contains(c.Message, loopGuardMessage)
	}})
	defer func() { w.stop(err) }()
	if err := w.setUp(ctx, nil); err != nil {
		return w.res, err
	}
	targets := raceTargetsOf(w.fleet, in.N)
	for _, t := range targets {
		if t.gvk == m3mtGVK {
			raced[t.key.Namespace] = true
		}
	}
	w.res.Fault = fmt.Sprintf("another writer sets %d objects back for %s", len(targets), raceFor)
	if err := w.step("inject the fault", func() error { return race(ctx, w, d, targets) }); err != nil {
		return w.res, err
	}
	w.faultsStopped(ctx)
	return w.conclude(ctx, checks{}, func(writes []Write) error { return d.check(ctx, w, writes) })
}

// race sets a random target back every racePause, for raceFor from the
// first set-back (at most convergeTimeout without one): before the add-on's
// first correction there is nothing to set back.
func race(ctx context.Context, w *world, d *drifts, targets []raceTarget) error {
	deadline := time.Now().Add(convergeTimeout)
	for time.Now().Before(deadline) {
		t := targets[w.rng.IntN(len(targets))]
		ok, err := setBack(ctx, w.env.Client, t)
		if err != nil {
			return err
		}
		if ok {
			if d.fig.OtherWrites == 0 {
				deadline = time.Now().Add(raceFor)
			}
			d.record(t)
		}
		if err := harness.Sleep(ctx, racePause); err != nil {
			return err
		}
	}
	return nil
}

// read reads t's object.
func (t raceTarget) read(ctx context.Context, c client.Client) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(t.gvk)
	if err := c.Get(ctx, client.ObjectKey{Namespace: t.key.Namespace, Name: t.key.Name}, u); err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", t.key, err)
	}
	return u, nil
}

// setBack reads t and, if it carries the add-on's correction, sets it back
// with an update at the resourceVersion read; a conflict (the add-on wrote
// in between) is no write.
func setBack(ctx context.Context, c client.Client, t raceTarget) (bool, error) {
	u, err := t.read(ctx, c)
	if err != nil {
		return false, err
	}
	if !t.setBack(u) {
		return false, nil
	}
	err = c.Update(ctx, u)
	if apierrors.IsConflict(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("failed to set %s back: %w", t.key, err)
	}
	return true, nil
}
