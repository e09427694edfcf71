package scale

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// releaseName is the name of every HelmRelease and Helm release of the
// fleet: one `cluster` release per workload cluster, each in its namespace.
const releaseName = "cluster"

// TemplatesPerRelease and DriftedPerRelease describe the fleet: every
// release renders four templates; a drifted release (every other one) has
// two of them, its Metal3MachineTemplates, still pointing at the bootstrap
// cluster's image server, as after `clusterctl move`.
const (
	TemplatesPerRelease = 4
	DriftedPerRelease   = 2
)

// setupWorkers bounds the releases created at once: enough to keep the API
// server busy on two cores, few enough not to time out its requests.
const setupWorkers = 8

// Namespace is the namespace of release i of the fleet.
func Namespace(i int) string { return fmt.Sprintf("fleet-%04d", i) }

// Drifted reports whether release i is created drifted: half the fleet is.
func Drifted(i int) bool { return i%2 == 0 }

// FleetManifest renders the fixture chart with v, with two changes:
//   - four templates, not five (a KubeadmConfigTemplate, two
//     Metal3MachineTemplates and two Metal3DataTemplates): the control
//     plane's machine template shares the workers' data template, and the
//     control plane's own is left out;
//   - no image format in the Metal3MachineTemplates. CAPM3 serves v1beta1
//     and stores v1beta2, where v1beta1's image.format is diskFormat. On a
//     cluster, CAPM3's conversion webhook carries it both ways; without
//     the managers the API server converts by changing apiVersion only,
//     so the field would be lost on the way, every pass would find it
//     missing and spend a dry-run per template to learn that the server
//     made the difference. That cost is this control plane's, not the
//     controller's.
func FleetManifest(v testenv.ChartValues) string {
	docs := strings.Split(testenv.RenderClusterChart(v), "\n---\n")
	kept := docs[:0]
	for _, d := range docs {
		if strings.Contains(d, "kind: Metal3DataTemplate\nmetadata:\n  name: mgmt-cp-metadata\n") {
			continue
		}
		d = strings.ReplaceAll(d, "dataTemplate: {name: mgmt-cp-metadata}", "dataTemplate: {name: mgmt-md0-metadata}")
		kept = append(kept, strings.ReplaceAll(d, ", format: qcow2}", "}"))
	}
	return strings.Join(kept, "\n---\n")
}

// CreateFleet creates n releases of the manifests render gives before and
// after the pivot, each in its own namespace: the live
// objects (the bootstrap cluster's values for drifted ones), the opted-in
// HelmRelease with spec.interval set to interval, the Helm release Secret
// written with Helm's own storage driver, and the HelmRelease's
// status.history as helm-controller records it.
//
// With a chart server, the fleet is helm-controller's (the same releases,
// objects and interval): each release also gets a HelmChart, Ready with
// an artifact on chart, which the HelmRelease names in spec.chartRef; the
// HelmRelease gets the whole status helm-controller leaves after an
// install, then spec.driftDetection.mode warn.
func CreateFleet(ctx context.Context, e *testenv.Env, n int, interval time.Duration, chart *ChartServer, render func(testenv.ChartValues) string) error {
	return createFleet(ctx, e, n, 1, interval, chart, render)
}

// createFleet is CreateFleet; with more than one shard, every object of
// release i carries the label of its shard (ShardKey, ShardOf), in the live
// objects and in the stored manifest, as a HelmRelease's
// spec.commonMetadata.labels puts it on every object it renders.
func createFleet(ctx context.Context, e *testenv.Env, n, shards int, interval time.Duration, chart *ChartServer, render func(testenv.ChartValues) string) error {
	desired := []string{render(testenv.Management)}
	pivoted := []string{render(testenv.Bootstrap)}
	if shards > 1 {
		d, p := desired[0], pivoted[0]
		desired, pivoted = nil, nil
		for k := range shards {
			dk, err := withLabel(d, ShardKey, ShardName(k))
			if err != nil {
				return err
			}
			pk, err := withLabel(p, ShardKey, ShardName(k))
			if err != nil {
				return err
			}
			desired, pivoted = append(desired, dk), append(pivoted, pk)
		}
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(setupWorkers)
	for i := range n {
		k := 0
		if shards > 1 {
			k = ShardOf(i, shards)
		}
		live := desired[k]
		if Drifted(i) {
			live = pivoted[k]
		}
		g.Go(func() error { return createRelease(ctx, e, Namespace(i), live, desired[k], "csa", interval, chart) })
	}
	return g.Wait()
}

// CreateRelease creates one opted-in release of the add-on's fleet in a new
// namespace ns: the live objects rendered in live, the HelmRelease with
// spec.interval set to interval, and the Helm release of desired, applied
// with applyMethod ("csa" or "ssa"), stored as Helm and helm-controller
// store it. The chaos harness builds its mixed fleet with it.
func CreateRelease(ctx context.Context, e *testenv.Env, ns, live, desired, applyMethod string, interval time.Duration) error {
	return createRelease(ctx, e, ns, live, desired, applyMethod, interval, nil)
}

// createRelease creates one release of the fleet, in the order a pivot
// leaves it: the objects, then the HelmRelease and what helm-controller
// stored for it (with chart, also its HelmChart, first).
func createRelease(ctx context.Context, e *testenv.Env, ns, live, desired, applyMethod string, interval time.Duration, chart *ChartServer) error {
	c := e.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return fmt.Errorf("failed to create namespace %s: %w", ns, err)
	}
	if err := testenv.CreateLive(ctx, c, ns, releaseName, live, nil); err != nil {
		return fmt.Errorf("failed to create the live objects of %s: %w", ns, err)
	}
	hr := testenv.NewHelmRelease(ns, releaseName, map[string]string{api.ModeAnnotation: api.ModeEnabled})
	hr.Spec.Interval = metav1.Duration{Duration: interval}
	if chart != nil {
		if err := createHelmChart(ctx, c, chart, ns); err != nil {
			return err
		}
		toHelmChart(hr)
	}
	if err := c.Create(ctx, hr); err != nil {
		return fmt.Errorf("failed to create HelmRelease %s/%s: %w", ns, releaseName, err)
	}
	rel := testenv.Release{Name: releaseName, Namespace: ns, Version: 1, Status: "deployed", ApplyMethod: applyMethod, Manifest: desired}
	if err := testenv.StoreRelease(ctx, e, rel); err != nil {
		return fmt.Errorf("failed to store the release of %s: %w", ns, err)
	}
	if chart != nil {
		return installForHelmController(ctx, c, hr, rel)
	}
	if err := testenv.SetHistory(ctx, c, hr, rel); err != nil {
		return fmt.Errorf("failed to record the release history of %s: %w", ns, err)
	}
	return nil
}
