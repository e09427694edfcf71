package plan

import (
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// now is the preview's clock in these tests.
var now = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// fromYAML decodes doc as the API server's objects are decoded: whole
// numbers are int64.
func fromYAML(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return u
}

const mdV1beta2 = `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: md0, namespace: ns}
spec:
  clusterName: mgmt
  replicas: 3
  template:
    metadata: {labels: {pool: a}}
    spec:
      clusterName: mgmt
      version: v1.35.0
      bootstrap: {configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: md0}}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: md0}
      deletion: {nodeDrainTimeoutSeconds: 60}
`

const mdV1beta1 = `apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: md0, namespace: ns}
spec:
  clusterName: mgmt
  replicas: 3
  template:
    spec:
      clusterName: mgmt
      version: v1.35.0
      bootstrap: {configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, name: md0}}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: md0}
      nodeDrainTimeout: 60s
`

const kcpV1beta2 = `apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata: {name: cp, namespace: ns}
spec:
  replicas: 3
  version: v1.35.0
  machineTemplate:
    metadata: {labels: {role: cp}}
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: cp}
      deletion: {nodeDrainTimeoutSeconds: 60}
  kubeadmConfigSpec:
    clusterConfiguration: {apiServer: {certSANs: [a.example]}}
`

const kcpV1beta1 = `apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata: {name: cp, namespace: ns}
spec:
  replicas: 3
  version: v1.35.0
  machineTemplate:
    infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: cp}
  kubeadmConfigSpec:
    clusterConfiguration: {apiServer: {certSANs: [a.example]}}
`

// edit returns a copy of o with value set at path.
func edit(t testing.TB, o *unstructured.Unstructured, value any, path ...string) *unstructured.Unstructured {
	t.Helper()
	c := o.DeepCopy()
	if err := unstructured.SetNestedField(c.Object, value, path...); err != nil {
		t.Fatal(err)
	}
	return c
}

// rolloutCase changes base at path to value; the rule must say rolls, for
// reasons.
type rolloutCase struct {
	name    string
	base    string
	value   any
	path    []string
	rolls   bool
	reasons []string
}

// checkRollouts runs rule on each case's before and after.
func checkRollouts(t *testing.T, rule func(before, after *unstructured.Unstructured, now time.Time) (Rollout, error), cases []rolloutCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			before := fromYAML(t, tc.base)
			got, err := rule(before, edit(t, before, tc.value, tc.path...), now)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Rolls).To(Equal(tc.rolls))
			if tc.rolls {
				g.Expect(got.Reasons).To(Equal(tc.reasons))
			} else {
				g.Expect(got.Reasons).To(BeEmpty())
			}
		})
	}
}

func TestMachineDeploymentRollout(t *testing.T) {
	tmpl := func(f ...string) []string { return append([]string{"spec", "template", "spec"}, f...) }
	checkRollouts(t, MachineDeploymentRollout, []rolloutCase{
		{name: "nothing changes", base: mdV1beta2, value: int64(3), path: []string{"spec", "replicas"}},
		{name: "replicas", base: mdV1beta2, value: int64(5), path: []string{"spec", "replicas"}},
		{name: "machine labels are propagated in place", base: mdV1beta2, value: "b", path: []string{"spec", "template", "metadata", "labels", "pool"}},
		{name: "drain timeout is propagated in place", base: mdV1beta2, value: int64(120), path: tmpl("deletion", "nodeDrainTimeoutSeconds")},
		{name: "minReadySeconds is propagated in place", base: mdV1beta2, value: int64(30), path: tmpl("minReadySeconds")},
		{name: "v1beta1 drain timeout is propagated in place", base: mdV1beta1, value: "2m", path: tmpl("nodeDrainTimeout")},
		{name: "infrastructure template renamed", base: mdV1beta2, value: "md0-v2", path: tmpl("infrastructureRef", "name"),
			rolls: true, reasons: []string{"Metal3Machine is not up-to-date"}},
		{name: "v1beta1 infrastructure template renamed", base: mdV1beta1, value: "md0-v2", path: tmpl("infrastructureRef", "name"),
			rolls: true, reasons: []string{"Metal3Machine is not up-to-date"}},
		{name: "v1beta1 reference's version alone plays no part", base: mdV1beta1, value: "infrastructure.cluster.x-k8s.io/v1beta2",
			path: tmpl("infrastructureRef", "apiVersion")},
		{name: "bootstrap template renamed", base: mdV1beta2, value: "md0-v2", path: tmpl("bootstrap", "configRef", "name"),
			rolls: true, reasons: []string{"KubeadmConfig is not up-to-date"}},
		{name: "version", base: mdV1beta2, value: "v1.36.0", path: tmpl("version"),
			rolls: true, reasons: []string{"Version v1.35.0, v1.36.0 required"}},
		{name: "failure domain", base: mdV1beta2, value: "rack-2", path: tmpl("failureDomain"),
			rolls: true, reasons: []string{"Failure domain , rack-2 required"}},
		{name: "rollout.after passed", base: mdV1beta2, value: "2026-12-01T00:00:00Z", path: []string{"spec", "rollout", "after"},
			rolls: true, reasons: []string{"rollout.after 2026-12-01T00:00:00Z passed"}},
		{name: "rolloutAfter (v1beta1) passed", base: mdV1beta1, value: "2026-12-01T00:00:00Z", path: []string{"spec", "rolloutAfter"},
			rolls: true, reasons: []string{"rolloutAfter 2026-12-01T00:00:00Z passed"}},
		{name: "rollout.after still to come", base: mdV1beta2, value: "2027-01-01T00:00:00Z", path: []string{"spec", "rollout", "after"}},
	})
}

func TestKubeadmControlPlaneRollout(t *testing.T) {
	checkRollouts(t, KubeadmControlPlaneRollout, []rolloutCase{
		{name: "replicas", base: kcpV1beta2, value: int64(5), path: []string{"spec", "replicas"}},
		{name: "machine labels", base: kcpV1beta2, value: "x", path: []string{"spec", "machineTemplate", "metadata", "labels", "role"}},
		{name: "drain timeout", base: kcpV1beta2, value: int64(120), path: []string{"spec", "machineTemplate", "spec", "deletion", "nodeDrainTimeoutSeconds"}},
		{name: "version bump", base: kcpV1beta2, value: "v1.36.0", path: []string{"spec", "version"},
			rolls: true, reasons: []string{"Version v1.35.0, v1.36.0 required"}},
		{name: "v1beta1 version bump", base: kcpV1beta1, value: "v1.36.0", path: []string{"spec", "version"},
			rolls: true, reasons: []string{"Version v1.35.0, v1.36.0 required"}},
		{name: "machine template renamed", base: kcpV1beta2, value: "cp-v2", path: []string{"spec", "machineTemplate", "spec", "infrastructureRef", "name"},
			rolls: true, reasons: []string{"Metal3Machine is not up-to-date"}},
		{name: "v1beta1 machine template renamed", base: kcpV1beta1, value: "cp-v2", path: []string{"spec", "machineTemplate", "infrastructureRef", "name"},
			rolls: true, reasons: []string{"Metal3Machine is not up-to-date"}},
		{name: "kubeadm config", base: kcpV1beta2, value: []any{"a.example", "b.example"},
			path:  []string{"spec", "kubeadmConfigSpec", "clusterConfiguration", "apiServer", "certSANs"},
			rolls: true, reasons: []string{"KubeadmConfig is not up-to-date"}},
		{name: "rollout.after passed", base: kcpV1beta2, value: "2026-12-02T11:00:00Z", path: []string{"spec", "rollout", "after"},
			rolls: true, reasons: []string{"rollout.after 2026-12-02T11:00:00Z passed"}},
		{name: "v1beta1 rolloutAfter passed", base: kcpV1beta1, value: "2026-12-02T11:00:00Z", path: []string{"spec", "rolloutAfter"},
			rolls: true, reasons: []string{"rolloutAfter 2026-12-02T11:00:00Z passed"}},
	})
}

func TestRolloutRefusesWhatItCannotCompare(t *testing.T) {
	g := NewWithT(t)
	md1, md2 := fromYAML(t, mdV1beta1), fromYAML(t, mdV1beta2)
	_, err := MachineDeploymentRollout(md1, md2, now)
	g.Expect(err).To(MatchError(ContainSubstring("cannot compare cluster.x-k8s.io/v1beta1 with cluster.x-k8s.io/v1beta2")))
	_, err = KubeadmControlPlaneRollout(md2, md2, now)
	g.Expect(err).To(MatchError(ContainSubstring("is not a KubeadmControlPlane")))
	bad := edit(t, md2, "not a reference", "spec", "template", "spec", "infrastructureRef")
	_, err = MachineDeploymentRollout(bad, bad, now)
	g.Expect(err).To(MatchError(ContainSubstring("spec.template.spec.infrastructureRef is not an object reference")))
}

// FuzzMachineDeploymentRollout feeds the rule machine templates of any
// shape: it never panics, an unchanged object never rolls, and a change of
// labels and annotations alone never rolls.
func FuzzMachineDeploymentRollout(f *testing.F) {
	f.Add(`{"version":"v1.35.0","infrastructureRef":{"kind":"Metal3MachineTemplate","name":"a"}}`, "b")
	f.Add(`{"bootstrap":{"dataSecretName":"s"},"failureDomain":"x"}`, "")
	f.Add(`{"infrastructureRef":{"apiVersion":"//bad","kind":1}}`, "x")
	f.Fuzz(func(t *testing.T, spec, label string) {
		var m map[string]any
		if err := json.Unmarshal([]byte(spec), &m); err != nil {
			return // not a JSON object: no machine template to judge
		}
		md := fromYAML(t, mdV1beta2)
		if err := unstructured.SetNestedField(md.Object, m, "spec", "template", "spec"); err != nil {
			return // a value no API server would return
		}
		r, err := MachineDeploymentRollout(md, md.DeepCopy(), now)
		if err != nil {
			return // a malformed reference is refused, not guessed
		}
		if r.Rolls {
			t.Fatalf("an unchanged MachineDeployment rolls: %v", r.Reasons)
		}
		relabelled := edit(t, md, map[string]any{"pool": label}, "spec", "template", "metadata", "labels")
		relabelled = edit(t, relabelled, map[string]any{"note": label}, "spec", "template", "metadata", "annotations")
		if r, err := MachineDeploymentRollout(md, relabelled, now); err != nil || r.Rolls {
			t.Fatalf("labels and annotations roll: %v, %v", r.Reasons, err)
		}
	})
}
