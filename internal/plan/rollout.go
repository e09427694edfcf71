package plan

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/core/reconcilers/machinedeployment/mdutil"
)

// Rollout says whether a change to a consumer of templates replaces its
// Machines, and why, in Cluster API's own words.
type Rollout struct {
	// Rolls: Cluster API replaces the consumer's Machines.
	Rolls bool
	// Reasons are what differs, as Cluster API's conditions word it
	// ("Metal3Machine is not up-to-date", "Version v1.35.0, v1.36.0
	// required"); empty when nothing rolls.
	Reasons []string
}

// MachineDeploymentRollout decides whether changing a MachineDeployment from
// before to after rolls its Machines, as Cluster API v1.14's MachineDeployment
// controller decides: its machine templates are compared by Cluster API's
// own mdutil.MachineTemplateUpToDate, which leaves out the fields it
// propagates in place (labels, annotations, minReadySeconds, readiness gates,
// taints, the node drain, volume detach and deletion timeouts), and a
// spec.rollout.after (v1beta1: spec.rolloutAfter) that is new and has passed
// at now replaces every Machine created before it. before and after are the
// same object at the same served version (v1beta1 or v1beta2).
func MachineDeploymentRollout(before, after *unstructured.Unstructured, now time.Time) (Rollout, error) {
	if err := sameKind(before, after, "MachineDeployment"); err != nil {
		return Rollout{}, err
	}
	cur, err := machineTemplateOf(before)
	if err != nil {
		return Rollout{}, err
	}
	want, err := machineTemplateOf(after)
	if err != nil {
		return Rollout{}, err
	}
	var r Rollout
	if upToDate, res := mdutil.MachineTemplateUpToDate(cur, want); !upToDate {
		r.Rolls, r.Reasons = true, res.ConditionMessages
	}
	if reason, ok := rolloutAfterPassed(before, after, now, []string{"spec", "rollout", "after"}, []string{"spec", "rolloutAfter"}); ok {
		r.Rolls, r.Reasons = true, append(r.Reasons, reason)
	}
	return r, nil
}

// KubeadmControlPlaneRollout decides whether changing a KubeadmControlPlane
// from before to after rolls its Machines. Cluster API v1.14's
// KubeadmControlPlane controller marks a Machine not up to date when the
// control plane's version, its machine template's infrastructure reference
// or its kubeadm configuration differ from the Machine's, or when
// spec.rollout.after (v1beta1: spec.rolloutAfter) has passed; so a change of
// any of these rolls every Machine. The kubeadm configurations are compared
// as the API server returns them, defaults included (both come from the
// server: the live object, and the server's dry-run of the change).
func KubeadmControlPlaneRollout(before, after *unstructured.Unstructured, now time.Time) (Rollout, error) {
	if err := sameKind(before, after, "KubeadmControlPlane"); err != nil {
		return Rollout{}, err
	}
	var r Rollout
	add := func(reason string) { r.Rolls, r.Reasons = true, append(r.Reasons, reason) }
	curVersion, _, _ := unstructured.NestedString(before.Object, "spec", "version")
	wantVersion, _, _ := unstructured.NestedString(after.Object, "spec", "version")
	if curVersion != wantVersion {
		add(fmt.Sprintf("Version %s, %s required", curVersion, wantVersion))
	}
	// v1beta2 nests the infrastructure reference under machineTemplate.spec.
	refPath := []string{"spec", "machineTemplate", "spec", "infrastructureRef"}
	if isV1Beta1(before) {
		refPath = []string{"spec", "machineTemplate", "infrastructureRef"}
	}
	curRef, err := objectRefAt(before, refPath...)
	if err != nil {
		return Rollout{}, err
	}
	wantRef, err := objectRefAt(after, refPath...)
	if err != nil {
		return Rollout{}, err
	}
	if curRef != wantRef {
		add(strings.TrimSuffix(curRef.Kind, clusterv1.TemplateSuffix) + " is not up-to-date")
	}
	curCfg, _, _ := unstructured.NestedFieldNoCopy(before.Object, "spec", "kubeadmConfigSpec")
	wantCfg, _, _ := unstructured.NestedFieldNoCopy(after.Object, "spec", "kubeadmConfigSpec")
	if !equality.Semantic.DeepEqual(curCfg, wantCfg) {
		add("KubeadmConfig is not up-to-date")
	}
	if reason, ok := rolloutAfterPassed(before, after, now, []string{"spec", "rollout", "after"}, []string{"spec", "rolloutAfter"}); ok {
		add(reason)
	}
	return r, nil
}

// sameKind checks that before and after are one object of kind at one
// version: the rules compare fields at the paths of that version.
func sameKind(before, after *unstructured.Unstructured, kind string) error {
	for _, o := range []*unstructured.Unstructured{before, after} {
		if o.GetKind() != kind {
			return fmt.Errorf("%s %s/%s is not a %s", o.GetKind(), o.GetNamespace(), o.GetName(), kind)
		}
	}
	if before.GetAPIVersion() != after.GetAPIVersion() {
		return fmt.Errorf("%s %s/%s: cannot compare %s with %s", kind, before.GetNamespace(), before.GetName(),
			before.GetAPIVersion(), after.GetAPIVersion())
	}
	return nil
}

func isV1Beta1(o *unstructured.Unstructured) bool {
	return strings.HasSuffix(o.GetAPIVersion(), "/v1beta1")
}

// machineTemplateOf reads the fields of a MachineDeployment's
// spec.template that a rollout depends on into Cluster API's v1beta2 type:
// the version, the bootstrap reference or data secret name, the
// infrastructure reference and the failure domain. A v1beta1 reference names
// an apiVersion; v1beta2 names only the group, which is what is compared.
func machineTemplateOf(md *unstructured.Unstructured) (*clusterv1.MachineTemplateSpec, error) {
	spec := []string{"spec", "template", "spec"}
	at := func(field ...string) []string { return append(append([]string{}, spec...), field...) }
	t := &clusterv1.MachineTemplateSpec{}
	t.Spec.Version, _, _ = unstructured.NestedString(md.Object, at("version")...)
	t.Spec.FailureDomain, _, _ = unstructured.NestedString(md.Object, at("failureDomain")...)
	if name, found, _ := unstructured.NestedString(md.Object, at("bootstrap", "dataSecretName")...); found {
		t.Spec.Bootstrap.DataSecretName = &name
	}
	var err error
	if t.Spec.Bootstrap.ConfigRef, err = objectRefAt(md, at("bootstrap", "configRef")...); err != nil {
		return nil, err
	}
	if t.Spec.InfrastructureRef, err = objectRefAt(md, at("infrastructureRef")...); err != nil {
		return nil, err
	}
	return t, nil
}

// objectRefAt reads the object reference at path of o as Cluster API
// v1beta2 compares references: group, kind and name (a v1beta1 reference's
// apiVersion gives the group; its version and namespace play no part).
func objectRefAt(o *unstructured.Unstructured, path ...string) (clusterv1.ContractVersionedObjectReference, error) {
	m, found, err := unstructured.NestedMap(o.Object, path...)
	if err != nil {
		return clusterv1.ContractVersionedObjectReference{}, fmt.Errorf("%s %s/%s: %s is not an object reference: %w",
			o.GetKind(), o.GetNamespace(), o.GetName(), strings.Join(path, "."), err)
	}
	if !found {
		return clusterv1.ContractVersionedObjectReference{}, nil
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	ref := clusterv1.ContractVersionedObjectReference{Kind: str("kind"), Name: str("name"), APIGroup: str("apiGroup")}
	if av := str("apiVersion"); av != "" {
		gv, err := schema.ParseGroupVersion(av)
		if err != nil {
			return clusterv1.ContractVersionedObjectReference{}, fmt.Errorf("%s %s/%s: %s.apiVersion: %w",
				o.GetKind(), o.GetNamespace(), o.GetName(), strings.Join(path, "."), err)
		}
		ref.APIGroup = gv.Group
	}
	return ref, nil
}

// rolloutAfterPassed reports whether after sets a rollout-after time, other
// than before's, that has passed at now: Cluster API then replaces every
// Machine created before that time. A time still to come rolls the Machines
// when it passes, which no preview of the change itself can say, and the
// same time as before rolled them already.
func rolloutAfterPassed(before, after *unstructured.Unstructured, now time.Time, v1beta2, v1beta1 []string) (string, bool) {
	path := v1beta2
	if isV1Beta1(after) {
		path = v1beta1
	}
	cur, _, _ := unstructured.NestedString(before.Object, path...)
	want, _, _ := unstructured.NestedString(after.Object, path...)
	if want == "" || want == cur {
		return "", false
	}
	t, err := time.Parse(time.RFC3339, want)
	if err != nil || t.After(now) {
		return "", false
	}
	return fmt.Sprintf("%s %s passed", strings.Join(path[1:], "."), want), true
}

// MachineCount is how many Machines a rollout of one consumer replaces, as
// its live object says; Known is false when the object does not say.
type MachineCount struct {
	N     int64
	Known bool
}

// String says the count in a message: "2 Machines", "an unknown number of
// Machines" (never 0 for a count not known).
func (m MachineCount) String() string {
	switch {
	case !m.Known:
		return "an unknown number of Machines"
	case m.N == 1:
		return "1 Machine"
	}
	return fmt.Sprintf("%d Machines", m.N)
}

// CountMachines reads how many Machines a rollout of consumer (a
// MachineDeployment, MachinePool or control plane) replaces: the larger of
// the Machines it wants (spec.replicas) and those it has (status.replicas,
// Cluster API's count of the Machines of a MachineDeployment's
// MachineSets, of a control plane, of a MachinePool). A rollout replaces
// every one of them. Unknown when the object has neither field, or is nil.
func CountMachines(consumer *unstructured.Unstructured) MachineCount {
	var m MachineCount
	if consumer == nil {
		return m
	}
	for _, path := range [][]string{{"spec", "replicas"}, {"status", "replicas"}} {
		if n, found, err := unstructured.NestedInt64(consumer.Object, path...); found && err == nil {
			m.N, m.Known = max(m.N, n), true
		}
	}
	return m
}

// RollingOut reports whether consumer (a MachineDeployment, MachinePool or
// control plane) is rolling out, from the fields Cluster API v1.14 derives
// its RollingOut condition from: fewer of its Machines are up to date than
// it wants or has (an old Machine not yet deleted after a surge), or its
// controller has not yet observed its latest generation (a reference just
// repointed). The condition itself is not read: the cache keeps no
// conditions, and these fields say the same.
func RollingOut(consumer *unstructured.Unstructured) bool {
	if g, found, _ := unstructured.NestedInt64(consumer.Object, "status", "observedGeneration"); found && g < consumer.GetGeneration() {
		return true
	}
	path := []string{"status", "upToDateReplicas"}
	if isV1Beta1(consumer) {
		path = []string{"status", "v1beta2", "upToDateReplicas"}
	}
	upToDate, found, _ := unstructured.NestedInt64(consumer.Object, path...)
	m := CountMachines(consumer)
	return found && m.Known && upToDate < m.N
}
