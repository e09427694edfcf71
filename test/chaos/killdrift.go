package chaos

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// killLead bounds how long before each kill the kill scenario drifts
// objects afresh: the add-on notices a change within about 0.3 s, so most
// kills land while it corrects them, not on a fleet at rest.
const killLead = time.Second

// killDrifts is how many objects the kill scenario drifts before each kill.
func killDrifts(n int) int { return max(2, n/20) }

// freshImage returns a setter that points a Metal3MachineTemplate at an
// image server of its own for kill cycle: a value no correction has met
// before, so the add-on's loop guard (a correction written once and set
// back to the same value) does not stop it.
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

// driftAfresh drifts killDrifts objects of the fleet for kill cycle: the
// workers' Metal3MachineTemplate of in-place releases (to a fresh image
// server) and the KubeadmControlPlane of rotate releases (back to the
// original locked template, as a Helm upgrade would), picked at random. It
// records them for the lost-update check and counts the writes stored.
func (r *run) driftAfresh(ctx context.Context, cycle int) error {
	all := raceTargetsOf(r.fleet, r.cfg.N)
	for range killDrifts(r.cfg.N) {
		t := all[r.rng.IntN(len(all))]
		if t.gvk == m3mtGVK {
			t.setBack = freshImage(cycle)
		}
		ok, err := setBack(ctx, r.env.Client, t)
		if err != nil {
			return err
		}
		if ok {
			r.res.OtherWrites++
			r.raced[scopeKey(t.key.Namespace, resourceOf(t.key.Kind), t.key.Name)]++
			r.raceTargets = appendTarget(r.raceTargets, t)
		}
	}
	return nil
}

// appendTarget adds t to ts unless an object of the same key is there.
func appendTarget(ts []raceTarget, t raceTarget) []raceTarget {
	for _, x := range ts {
		if x.key == t.key {
			return ts
		}
	}
	return append(ts, t)
}
