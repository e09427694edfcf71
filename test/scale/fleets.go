package scale

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// Fleet is one shape of management cluster the benchmark runs on: which
// providers' kinds its API server serves, and what each release renders.
// Real management clusters do not serve every kind the add-on knows: a
// kubeadm cluster has no RKE2, an OpenStack or vSphere cluster has no
// Metal3 kinds, and few use MachinePools.
type Fleet struct {
	// Name is the BENCH_FLEETS word.
	Name string
	// Doc says what cluster it stands for.
	Doc string
	// Omit are the kinds whose CRDs its API server does not serve
	// (testenv.Options.OmitKinds; Kind is a path.Match pattern).
	Omit []schema.GroupKind
	// Render renders a release's manifest with the values before or after
	// the pivot.
	Render func(v testenv.ChartValues) string
	// Templates and Drifted are the templates each release renders, and
	// those a drifted release has drifted.
	Templates, Drifted int
	// Healed checks that the fleet's drifted templates were corrected.
	Healed func(ctx context.Context, c client.Client, n int) error
	// React is the drift written to an in-sync release's template after
	// the steady state.
	React Drift
}

// Drift describes the drift the reaction measure writes: a merge patch of
// one template of a release, and the check that it was corrected.
type Drift struct {
	GVK   schema.GroupVersionKind
	Name  string
	Patch string
	// Healed reports whether the template read back is corrected.
	Healed func(*unstructured.Unstructured) bool
}

// DefaultFleets is BENCH_FLEETS' default: every kind served.
var DefaultFleets = []string{"full"}

var (
	kubeadmConfigTemplate = schema.GroupVersionKind{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmConfigTemplate"}
	lockedMachineTemplate = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "LockedMachineTemplate"}
)

// metal3Reaction drifts the workers' Metal3MachineTemplate's image.
var metal3Reaction = Drift{GVK: machineTemplate, Name: "mgmt-md0",
	Patch: fmt.Sprintf(`{"spec":{"template":{"spec":{"image":{"url":%q}}}}}`, reactionImageURL),
	Healed: func(o *unstructured.Unstructured) bool {
		url, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "image", "url")
		return url == testenv.Management.ImageURL
	}}

// Fleets are the shapes BENCH_FLEETS names.
var Fleets = []Fleet{
	{Name: "full", Doc: "every kind the add-on knows is served (Cluster API, kubeadm, RKE2, Metal3 with claims and data)",
		Render: FleetManifest, Templates: TemplatesPerRelease, Drifted: DriftedPerRelease, Healed: metal3Healed, React: metal3Reaction},
	{Name: "kubeadm-metal3", Doc: "kubeadm and Metal3 without RKE2, MachinePools or CAPM3's Metal3DataClaims and Metal3Data",
		Omit: []schema.GroupKind{
			{Group: "controlplane.cluster.x-k8s.io", Kind: "RKE2*"}, {Group: "bootstrap.cluster.x-k8s.io", Kind: "RKE2*"},
			{Group: "cluster.x-k8s.io", Kind: "MachinePool"},
			{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3DataClaim"}, {Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3Data"},
		},
		Render: FleetManifest, Templates: TemplatesPerRelease, Drifted: DriftedPerRelease, Healed: metal3Healed, React: metal3Reaction},
	{Name: "rke2-metal3", Doc: "RKE2 and Metal3 without kubeadm: an RKE2ControlPlane, and workers bootstrapped from a Secret",
		Omit:   []schema.GroupKind{{Group: "controlplane.cluster.x-k8s.io", Kind: "Kubeadm*"}, {Group: "bootstrap.cluster.x-k8s.io", Kind: "Kubeadm*"}},
		Render: rke2Manifest, Templates: 4, Drifted: 2, Healed: metal3Healed, React: metal3Reaction},
	{Name: "capi-locked", Doc: "Cluster API core and kubeadm without Metal3: a generic provider whose machine template is locked (rotated)",
		Omit:   []schema.GroupKind{{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3*"}, {Group: "metal3.io", Kind: "*"}, {Group: "ipam.metal3.io", Kind: "*"}},
		Render: lockedManifest, Templates: 3, Drifted: 2, Healed: lockedHealed,
		React: Drift{GVK: kubeadmConfigTemplate, Name: "mgmt-md0",
			Patch: `{"spec":{"template":{"spec":{"files":[{"path":"/etc/motd","content":"drifted"}]}}}}`,
			Healed: func(o *unstructured.Unstructured) bool {
				files, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "files")
				f, _ := firstOf(files).(map[string]any)
				return f["content"] == "hello"
			}}},
}

// FleetNamed returns the fleet called name.
func FleetNamed(name string) (Fleet, error) {
	for _, f := range Fleets {
		if f.Name == name {
			return f, nil
		}
	}
	names := make([]string, 0, len(Fleets))
	for _, f := range Fleets {
		names = append(names, f.Name)
	}
	return Fleet{}, fmt.Errorf("unknown fleet %q: want one of %s", name, strings.Join(names, ", "))
}

func firstOf(s []any) any {
	if len(s) == 0 {
		return nil
	}
	return s[0]
}

// editDocs renders the fixture chart with v and runs edit on each
// document; edit returns "" to drop one.
func editDocs(v testenv.ChartValues, edit func(string) string) string {
	docs := strings.Split(testenv.RenderClusterChart(v), "\n---\n")
	kept := docs[:0]
	for _, d := range docs {
		if d = edit(d); d != "" {
			kept = append(kept, d)
		}
	}
	return strings.Join(kept, "\n---\n")
}

// rke2Control is the RKE2 control plane of rke2Manifest.
const rke2Control = `# Source: cluster/templates/controlplane.yaml
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: RKE2ControlPlane
metadata:
  name: mgmt-cp
spec:
  version: v1.33.4+rke2r1
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: mgmt-cp}`

// rke2Manifest is the fixture chart on RKE2: an RKE2ControlPlane instead of
// the KubeadmControlPlane, workers bootstrapped from a Secret instead of a
// KubeadmConfigTemplate, and both Metal3DataTemplates: four templates, two
// of them (the Metal3MachineTemplates) drifted by the pivot.
func rke2Manifest(v testenv.ChartValues) string {
	return editDocs(v, func(d string) string {
		switch {
		case strings.Contains(d, "kind: KubeadmConfigTemplate\nmetadata:"):
			return ""
		case strings.Contains(d, "kind: KubeadmControlPlane\nmetadata:"):
			return rke2Control
		}
		d = strings.ReplaceAll(d, "kind: KubeadmControlPlane, name: mgmt-cp", "kind: RKE2ControlPlane, name: mgmt-cp")
		d = strings.ReplaceAll(d, "configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: mgmt-md0}", "dataSecretName: mgmt-md0-bootstrap")
		return strings.ReplaceAll(d, ", format: qcow2}", "}")
	})
}

// lockedMachine is the workers' locked machine template of lockedManifest.
const lockedMachine = `# Source: cluster/templates/locked.yaml
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: LockedMachineTemplate
metadata:
  name: mgmt-md0
spec:
  template:
    spec: {image: "%s", flavor: large}`

// lockedManifest is the fixture chart on a provider that locks its whole
// machine template: a KubeadmConfigTemplate and two LockedMachineTemplates
// (workers and control plane), no Metal3 kinds. The pivot drifts both
// locked templates, which only a rotation corrects.
func lockedManifest(v testenv.ChartValues) string {
	v.CPKind = "LockedMachineTemplate"
	return editDocs(v, func(d string) string {
		switch {
		case strings.Contains(d, "kind: Metal3DataTemplate\nmetadata:"):
			return ""
		case strings.Contains(d, "kind: Metal3MachineTemplate\nmetadata:"):
			return fmt.Sprintf(lockedMachine, v.ImageURL)
		}
		return strings.ReplaceAll(d, "kind: Metal3MachineTemplate, name: mgmt-md0", "kind: LockedMachineTemplate, name: mgmt-md0")
	})
}

// metal3Healed checks that the fleet's Metal3MachineTemplates, two a
// release, were corrected under their own names.
func metal3Healed(ctx context.Context, c client.Client, n int) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(machineTemplate.GroupVersion().WithKind(machineTemplate.Kind + "List"))
	if err := c.List(ctx, list); err != nil {
		return err
	}
	var drifted []string
	for _, o := range list.Items {
		if !metal3Reaction.Healed(&o) {
			drifted = append(drifted, o.GetNamespace()+"/"+o.GetName())
		}
	}
	if len(list.Items) != 2*n || len(drifted) > 0 {
		return fmt.Errorf("found %d Metal3MachineTemplates (want %d), %d of them still drifted (%v)",
			len(list.Items), 2*n, len(drifted), first(drifted, 5))
	}
	return nil
}

// lockedHealed checks that every release's MachineDeployment and control
// plane name a LockedMachineTemplate with the management cluster's image:
// the original where it was in sync, a replacement where it was rotated.
func lockedHealed(ctx context.Context, c client.Client, n int) error {
	images := map[string]string{}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(lockedMachineTemplate.GroupVersion().WithKind(lockedMachineTemplate.Kind + "List"))
	if err := c.List(ctx, list); err != nil {
		return err
	}
	for _, o := range list.Items {
		images[o.GetNamespace()+"/"+o.GetName()], _, _ = unstructured.NestedString(o.Object, "spec", "template", "spec", "image")
	}
	var drifted []string
	refs := 0
	for _, consumer := range []struct {
		gvk  schema.GroupVersionKind
		path []string
	}{
		{schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineDeployment"}, []string{"spec", "template", "spec", "infrastructureRef", "name"}},
		{schema.GroupVersionKind{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmControlPlane"}, []string{"spec", "machineTemplate", "spec", "infrastructureRef", "name"}},
	} {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(consumer.gvk.GroupVersion().WithKind(consumer.gvk.Kind + "List"))
		if err := c.List(ctx, l); err != nil {
			return err
		}
		for _, o := range l.Items {
			name, _, _ := unstructured.NestedString(o.Object, consumer.path...)
			refs++
			if images[o.GetNamespace()+"/"+name] != testenv.Management.ImageURL {
				drifted = append(drifted, o.GetNamespace()+"/"+o.GetName()+" → "+name)
			}
		}
	}
	if refs != 2*n || len(drifted) > 0 {
		slices.Sort(drifted)
		return fmt.Errorf("found %d references to LockedMachineTemplates (want %d), %d of them to a drifted one (%v)",
			refs, 2*n, len(drifted), first(drifted, 5))
	}
	return nil
}
