package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

// Case is how the add-on corrects a release of the fleet.
type Case string

// The cases of the fleet, a third each (release i is Cases[i%3]).
const (
	// CaseInPlace: both Metal3MachineTemplates point at the bootstrap image
	// server, client-side apply; each is patched in place.
	CaseInPlace Case = "in-place"
	// CaseRotate: the control plane's LockedMachineTemplate (its spec is
	// immutable) and the workers' Metal3MachineTemplate point at the
	// bootstrap image server, client-side apply; the locked template is
	// rotated to a hash-suffixed replacement and the KubeadmControlPlane
	// repointed, the other patched in place.
	CaseRotate Case = "rotate"
	// CaseRecreate: server-side apply, where Helm would set a repointed
	// reference back, with a drifted LockedMachineTemplate that nothing uses
	// (recreated under its name) and the Metal3MachineTemplates drifted
	// (patched in place).
	CaseRecreate Case = "recreate"
)

// Cases are the cases in fleet order.
var Cases = []Case{CaseInPlace, CaseRotate, CaseRecreate}

// CaseOf is the case of release i.
func CaseOf(i int) Case { return Cases[i%len(Cases)] }

// spareName is the recreate case's locked template that nothing uses.
const spareName = "spare-locked"

// spareLocked renders the recreate case's unused locked template with the
// image server of url.
func spareLocked(url string) string {
	return `apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: LockedMachineTemplate
metadata: {name: ` + spareName + `}
spec:
  template:
    spec: {image: "` + url + `", flavor: large}
`
}

// Manifests returns the live objects (as the pivot left them), the release
// manifest and Helm's apply method of a release of case c. They start from
// the scale benchmark's fleet manifest.
func Manifests(c Case) (live, desired, applyMethod string) {
	boot, mgmt := testenv.Bootstrap, testenv.Management
	switch c {
	case CaseRotate:
		boot.CPKind, mgmt.CPKind = "LockedMachineTemplate", "LockedMachineTemplate"
		return scale.FleetManifest(boot), scale.FleetManifest(mgmt), "csa"
	case CaseRecreate:
		join := func(v testenv.ChartValues) string {
			return strings.TrimRight(scale.FleetManifest(v), "\n") + "\n---\n" + spareLocked(v.ImageURL)
		}
		return join(boot), join(mgmt), "ssa"
	default:
		return scale.FleetManifest(boot), scale.FleetManifest(mgmt), "csa"
	}
}

// managedMetadataIP is the data templates' metaData value the release
// manifests of a fleet with the real managers carry, where the live data
// templates keep the bootstrap cluster's.
const managedMetadataIP = "192.168.100.2"

// ManagedManifests are Manifests(c) for a fleet run with the real
// managers: in the client-side-apply cases the release manifest also
// changes the data template's metaData, which CAPM3's webhook refuses to
// modify, so the data template that every Machine's claim names is
// rotated and the machine templates repointed. The server-side-apply
// case's data template is not drifted: Helm would set the repointed
// machine templates back, and a claimed template may not be recreated.
func ManagedManifests(c Case) (live, desired, applyMethod string) {
	live, desired, applyMethod = Manifests(c)
	if applyMethod == "csa" {
		from := `value: "` + testenv.Management.MetadataIP + `"`
		desired = strings.ReplaceAll(desired, from, `value: "`+managedMetadataIP+`"`)
	}
	return live, desired, applyMethod
}

// ObjectKey names an object of a namespace by its kind.
type ObjectKey struct{ Namespace, Kind, Name string }

func (k ObjectKey) String() string { return k.Kind + " " + k.Namespace + "/" + k.Name }

// consumerKinds are the kinds of the fixture chart that name templates.
var consumerKinds = map[string]bool{"KubeadmControlPlane": true, "MachineDeployment": true}

// IsTemplateKind reports whether kind is a Cluster API template kind, the
// only kinds the add-on corrects.
func IsTemplateKind(kind string) bool { return strings.HasSuffix(kind, "Template") }

// ManifestObjects lists the templates and consumers a manifest renders in
// namespace ns: the objects the add-on may write (with the replacements of
// those templates), and the templates that must exist once it converged.
func ManifestObjects(ns, manifest string) ([]ObjectKey, error) {
	var out []ObjectKey
	for _, doc := range strings.Split(manifest, "\n---\n") {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return nil, fmt.Errorf("failed to parse a manifest document: %w", err)
		}
		if kind := u.GetKind(); IsTemplateKind(kind) || consumerKinds[kind] {
			out = append(out, ObjectKey{Namespace: ns, Kind: kind, Name: u.GetName()})
		}
	}
	return out, nil
}

// Fleet is what the harness created: each release's namespace, case, and
// the templates and consumers of its manifest.
type Fleet struct {
	// Cases is the case of each release, by namespace.
	Cases map[string]Case
	// Objects are the templates and consumers of every release's manifest.
	Objects []ObjectKey
	// Managers is true when the real managers run: the manifests are
	// ManagedManifests, and every data template is claimed.
	Managers bool
}

// createWorkers bounds the releases created at once (as scale's setup).
const createWorkers = 8

// CreateFleet creates n opted-in releases, release i of case CaseOf(i) in
// namespace scale.Namespace(i).
// With managers, the manifests are ManagedManifests.
func CreateFleet(ctx context.Context, e *testenv.Env, n int, interval time.Duration, managers bool) (Fleet, error) {
	f := Fleet{Cases: map[string]Case{}, Managers: managers}
	render := Manifests
	if managers {
		render = ManagedManifests
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(createWorkers)
	for i := range n {
		ns, c := scale.Namespace(i), CaseOf(i)
		live, desired, method := render(c)
		objs, err := ManifestObjects(ns, desired)
		if err != nil {
			return Fleet{}, err
		}
		f.Cases[ns] = c
		f.Objects = append(f.Objects, objs...)
		g.Go(func() error { return scale.CreateRelease(gctx, e, ns, live, desired, method, interval) })
	}
	return f, g.Wait()
}
