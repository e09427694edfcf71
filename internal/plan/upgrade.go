package plan

import (
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// UpgradeChange is what a Helm upgrade does to one object.
type UpgradeChange string

// The changes an upgrade makes to one object.
const (
	UpgradeUnchanged UpgradeChange = "unchanged"
	UpgradeCreate    UpgradeChange = "create"
	UpgradeUpdate    UpgradeChange = "update"
	UpgradeDelete    UpgradeChange = "delete"
	UpgradeRefused   UpgradeChange = "refused"
)

// UpgradeFacts are the API server's answers about one object of a Helm
// upgrade, from the dry-runs a preview makes of exactly the requests Helm
// would send.
type UpgradeFacts struct {
	// Live is the object now; nil when it does not exist.
	Live *unstructured.Unstructured
	// After is what the server would store; nil when it refused, or for a
	// deletion.
	After *unstructured.Unstructured
	// Refusal is the server's refusal of the change (invalid, forbidden
	// by a webhook, immutable).
	Refusal error
	// Dropped: the new manifest no longer has the object, and Helm deletes it.
	Dropped bool
	// Template: the object is of a template kind.
	Template bool
	// Now is the preview's clock, for rollout-after times.
	Now time.Time
}

// UpgradeEffect is what the upgrade does to one object.
type UpgradeEffect struct {
	Change UpgradeChange
	// Fails: the server refuses the change, so the upgrade fails.
	Fails bool
	// Rollout is whether a MachineDeployment or a KubeadmControlPlane
	// rolls its Machines.
	Rollout Rollout
	// Note says what the change means otherwise.
	Note string
}

// The notes of an upgrade effect.
const (
	noteRenameLocked = "the upgrade fails: give the changed template a new, hash-suffixed name in the chart, and point its consumers at it"
	noteInPlace      = "in place: rolls nothing; only Machines created later get the change"
)

// JudgeUpgrade says what the server's answers mean for one object: a
// refusal fails the upgrade (for a template, the way out is a new name in
// the chart); a change to a MachineDeployment or a KubeadmControlPlane may
// roll its Machines (MachineDeploymentRollout, KubeadmControlPlaneRollout);
// a template changed in place rolls nothing, and only Machines created
// later get the change.
func JudgeUpgrade(f UpgradeFacts) (UpgradeEffect, error) {
	switch {
	case f.Refusal != nil:
		v := UpgradeEffect{Change: UpgradeRefused, Fails: true}
		if f.Dropped {
			v.Change = UpgradeDelete
		} else if f.Template {
			v.Note = noteRenameLocked
		}
		return v, nil
	case f.Dropped:
		return UpgradeEffect{Change: UpgradeDelete}, nil
	case f.Live == nil:
		return UpgradeEffect{Change: UpgradeCreate}, nil
	case !changedByServer(f.Live, f.After):
		return UpgradeEffect{Change: UpgradeUnchanged}, nil
	}
	v := UpgradeEffect{Change: UpgradeUpdate}
	var err error
	switch f.Live.GetKind() {
	case "MachineDeployment":
		v.Rollout, err = MachineDeploymentRollout(f.Live, f.After, f.Now)
	case "KubeadmControlPlane":
		v.Rollout, err = KubeadmControlPlaneRollout(f.Live, f.After, f.Now)
	default:
		if f.Template {
			v.Note = noteInPlace
		}
	}
	return v, err
}

// UpgradeRefusal reports whether err, the server's answer to a dry-run of
// one of an upgrade's requests, refuses the change, so that Helm's real
// request would fail the upgrade: invalid, a bad request, denied by
// admission, or a conflict (a name that is taken). A denial of the
// previewing identity's own rights (AccessDenied) says nothing about
// helm-controller's, nor does a failure to answer: the preview fails with
// those instead of predicting.
func UpgradeRefusal(err error) bool {
	return (IsRefusal(err) && !AccessDenied(err)) || ClassifyError(err) == ErrorConflict
}

// authorizerDenial is how kube-apiserver words a request that authorization
// (RBAC, or any other authorizer) denied: `User "u" cannot delete resource
// "r" in API group "g"...`. Admission denials are also 403 Forbidden, but
// name the webhook or policy instead.
var authorizerDenial = regexp.MustCompile(`User "[^"]*" cannot \S+ (resource|path) "`)

// AccessDenied reports whether err is the API server's authorizer denying
// the identity the request's verb, rather than admission refusing the
// object.
func AccessDenied(err error) bool {
	return ClassifyError(err) == ErrorForbidden && authorizerDenial.MatchString(err.Error())
}

// conversionDataAnnotation is where Cluster API's and CAPM3's conversion
// keeps, on an object read at an older API version, what that version
// cannot hold, status included: it is computed on each read, so it changes
// whenever a controller writes the status, between a preview's read and
// its dry-run too, and no write of Helm's changes it.
const conversionDataAnnotation = "cluster.x-k8s.io/conversion-data"

// changedByServer reports whether the server's dry-run result differs from
// the live object in anything but what every write changes (managed
// fields, resourceVersion, generation, status) and the conversion's record
// of the status.
func changedByServer(live, after *unstructured.Unstructured) bool {
	strip := func(o *unstructured.Unstructured) map[string]any {
		c := o.DeepCopy()
		for _, f := range [][]string{{"metadata", "managedFields"}, {"metadata", "resourceVersion"}, {"metadata", "generation"}, {"status"},
			{"metadata", "annotations", conversionDataAnnotation}} {
			unstructured.RemoveNestedField(c.Object, f...)
		}
		if len(c.GetAnnotations()) == 0 {
			unstructured.RemoveNestedField(c.Object, "metadata", "annotations")
		}
		return c.Object
	}
	return !equality.Semantic.DeepEqual(strip(live), strip(after))
}

// DriftFate is what a Helm upgrade does to a template's drift, as the
// add-on's passes before and after it see the template.
type DriftFate string

// The fates of a template's drift.
const (
	// DriftNone: in sync before the upgrade and after it.
	DriftNone DriftFate = "none"
	// DriftHealed: drifted now; the upgrade writes the manifest over it.
	DriftHealed DriftFate = "healed"
	// DriftStays: drifted now and after the upgrade (a client-side-apply
	// upgrade patches only what the manifest changes), or the upgrade fails.
	DriftStays DriftFate = "stays"
	// DriftAppears: in sync now, drifted after the upgrade.
	DriftAppears DriftFate = "appears"
	// DriftFailsUpgrade: the server refuses the upgrade's change to the
	// template, so the upgrade fails on it.
	DriftFailsUpgrade DriftFate = "failsUpgrade"
)

// FateOfDrift says what an upgrade does to a template's drift, from the
// outcome of a read-only pass now (today) and of one over the world as the
// upgrade would leave it (after; ignored when the upgrade fails, since
// nothing can be said of a world that does not come to be). refused: the
// server refuses the upgrade's change to this template; fails: the
// upgrade fails, on this object or another.
func FateOfDrift(today, after Outcome, refused, fails bool) DriftFate {
	switch {
	case refused:
		return DriftFailsUpgrade
	case fails && today.Differs():
		return DriftStays
	case fails:
		return DriftNone
	case today.Differs() && after.Differs():
		return DriftStays
	case today.Differs():
		return DriftHealed
	case after.Differs():
		return DriftAppears
	}
	return DriftNone
}
