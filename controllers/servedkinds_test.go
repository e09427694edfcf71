package controllers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/events"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/controllers"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

// requestLog records the requests the controller makes.
type requestLog struct {
	next http.RoundTripper
	mu   sync.Mutex
	reqs []string
}

func (l *requestLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.reqs = append(l.reqs, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	l.mu.Unlock()
	return l.next.RoundTrip(r)
}

// take returns the requests recorded since the last take.
func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.reqs
	l.reqs = nil
	return out
}

// isDiscovery reports whether a recorded request is API discovery: /api,
// /apis (aggregated discovery), /api/v1 or /apis/<group>/<version>.
func isDiscovery(req string) bool {
	method, rest, _ := strings.Cut(req, " ")
	path, _, _ := strings.Cut(rest, "?")
	return method == http.MethodGet && scale.IsDiscovery(path)
}

func filterReqs(reqs []string, keep func(string) bool) []string {
	var out []string
	for _, r := range reqs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// passes sums the passes the reconcile duration histogram observed.
func passes(g Gomega, reg *prometheus.Registry) uint64 {
	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	var n uint64
	for _, f := range families {
		if f.GetName() != "templatedrift_reconcile_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			n += m.GetHistogram().GetSampleCount()
		}
	}
	return n
}

// TestServedKinds runs the controller on a cluster that does not serve
// every kind the add-on knows: a kubeadm and Metal3 management cluster
// without MachinePools, RKE2 or CAPM3's claims and data. In the steady
// state a pass makes no discovery request. A kind installed later is read
// from an informer and watched from the next pass on; a kind whose CRD is
// deleted stops being listed, without errors.
func TestServedKinds(t *testing.T) {
	g := NewWithT(t)
	missing := []schema.GroupKind{manifest.MachinePoolKind, manifest.RKE2ControlPlaneKind, manifest.Metal3DataClaimKind, manifest.Metal3DataKind}
	e, err := testenv.StartWith("served-kinds", testenv.Options{ProviderCRDs: true, OmitKinds: missing})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(e.Stop()).To(Succeed()) }()
	g.Expect(e.Omitted).To(HaveLen(len(missing)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	const releases = 4
	desired, pivoted := scale.FleetManifest(testenv.Management), scale.FleetManifest(testenv.Bootstrap)
	for i := range releases {
		g.Expect(scale.CreateRelease(ctx, e, nsOf(i), pivoted, desired, "csa", time.Hour)).To(Succeed())
	}

	cfg := rest.CopyConfig(e.Config)
	reqs := &requestLog{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { reqs.next = rt; return reqs })
	mgr := newTestManager(g, cfg)
	recorder, err := events.NewRecorder(ctrl.Log, "", api.ControllerName, events.WithManager(mgr))
	g.Expect(err).NotTo(HaveOccurred())
	kinds, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	g.Expect(err).NotTo(HaveOccurred())
	reg := prometheus.NewRegistry()
	watched, err := controllers.Setup(ctx, mgr, controllers.Config{Kinds: kinds, DeleteWait: 5 * time.Second, ResyncInterval: time.Hour,
		Events: recorder, Metrics: reg, MaxConcurrentReconciles: 2})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(watched.CustomResourceDefinitions).To(BeTrue(), "an admin may watch CRDs")
	done := make(chan error)
	go func() { done <- mgr.Start(ctx) }()
	defer func() { cancel(); g.Expect(<-done).To(Succeed()) }()

	inSync := func() int {
		n := 0
		for i := range releases {
			hr := &helmv2.HelmRelease{}
			g.Expect(e.Client.Get(ctx, client.ObjectKey{Namespace: nsOf(i), Name: "cluster"}, hr)).To(Succeed())
			if c := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition); c != nil && c.Status == metav1.ConditionTrue {
				n++
			}
		}
		return n
	}
	g.Eventually(inSync, time.Minute, 200*time.Millisecond).Should(Equal(releases), "the drifted fleet is healed")

	// steady runs three passes of every release, requested as `flux
	// reconcile` requests them, and returns the requests of the last two.
	steady := func(round string) []string {
		time.Sleep(time.Second) // the passes the corrections' own watch events trigger
		before := passes(g, reg)
		for pass := range 3 {
			if pass == 1 {
				reqs.take()
			}
			for i := range releases {
				hr := &helmv2.HelmRelease{}
				g.Expect(e.Client.Get(ctx, client.ObjectKey{Namespace: nsOf(i), Name: "cluster"}, hr)).To(Succeed())
				patch := client.MergeFrom(hr.DeepCopy())
				hr.Annotations["reconcile.fluxcd.io/requestedAt"] = fmt.Sprintf("%s-%d", round, pass)
				g.Expect(e.Client.Patch(ctx, hr, patch)).To(Succeed())
			}
			g.Eventually(func() uint64 { return passes(g, reg) }, 30*time.Second, 50*time.Millisecond).
				Should(BeNumerically(">=", before+uint64((pass+1)*releases)))
		}
		time.Sleep(500 * time.Millisecond)
		return reqs.take()
	}

	t.Log("steady state: no discovery request, whichever kinds are missing")
	got := steady("missing")
	g.Expect(filterReqs(got, isDiscovery)).To(BeEmpty())
	t.Logf("%d requests for %d passes", len(got), 2*releases)

	t.Log("MachinePool is installed: from the next pass on it is read from an informer and watched")
	var mp *apiextensionsv1.CustomResourceDefinition
	for _, crd := range e.Omitted {
		if crd.Spec.Names.Kind == manifest.MachinePoolKind.Kind {
			mp = crd.DeepCopy()
		}
	}
	g.Expect(mp).NotTo(BeNil())
	g.Expect(e.Client.Create(ctx, mp)).To(Succeed())
	served := func() bool {
		_, err := e.Client.RESTMapper().RESTMapping(manifest.MachinePoolKind)
		return err == nil
	}
	g.Eventually(served, 30*time.Second, 200*time.Millisecond).Should(BeTrue())
	pool := &unstructured.Unstructured{}
	pool.SetAPIVersion("cluster.x-k8s.io/v1beta2")
	pool.SetKind("MachinePool")
	pool.SetNamespace(nsOf(0))
	pool.SetName("pool")
	pool.SetAnnotations(map[string]string{api.HelmReleaseNameAnnotation: "cluster", api.HelmReleaseNamespaceAnnotation: nsOf(0)})
	g.Expect(unstructured.SetNestedField(pool.Object, "mgmt", "spec", "clusterName")).To(Succeed())
	g.Expect(unstructured.SetNestedMap(pool.Object, map[string]any{
		"spec": map[string]any{
			"clusterName":       "mgmt",
			"bootstrap":         map[string]any{"dataSecretName": "pool"},
			"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "Metal3MachineTemplate", "name": "mgmt-md0"},
		},
	}, "spec", "template")).To(Succeed())
	// The pass after the CRD settles lists MachinePools; once its watch
	// runs, a new MachinePool that Helm's annotations tie to the release
	// brings a pass by itself.
	g.Eventually(func() error {
		before := passes(g, reg)
		p := pool.DeepCopy()
		p.SetName(fmt.Sprintf("pool-%d", time.Now().UnixNano()))
		if err := e.Client.Create(ctx, p); err != nil {
			return err
		}
		// A pass requested now reads MachinePools and starts their watch.
		hr := &helmv2.HelmRelease{}
		g.Expect(e.Client.Get(ctx, client.ObjectKey{Namespace: nsOf(0), Name: "cluster"}, hr)).To(Succeed())
		patch := client.MergeFrom(hr.DeepCopy())
		hr.Annotations["reconcile.fluxcd.io/requestedAt"] = p.GetName()
		g.Expect(e.Client.Patch(ctx, hr, patch)).To(Succeed())
		g.Eventually(func() uint64 { return passes(g, reg) }, 10*time.Second, 50*time.Millisecond).Should(BeNumerically(">", before))
		time.Sleep(time.Second)
		before = passes(g, reg)
		p = pool.DeepCopy()
		p.SetName(fmt.Sprintf("pool-%d", time.Now().UnixNano()))
		if err := e.Client.Create(ctx, p); err != nil {
			return err
		}
		if !waitFor(func() bool { return passes(g, reg) > before }, 5*time.Second) {
			return fmt.Errorf("a new MachinePool brought no pass: not watched yet")
		}
		return nil
	}, time.Minute, time.Second).Should(Succeed())
	got = steady("installed")
	g.Expect(filterReqs(got, isDiscovery)).To(BeEmpty())
	g.Expect(filterReqs(got, func(r string) bool { return strings.Contains(r, "/machinepools") && !strings.Contains(r, "watch=") })).
		To(BeEmpty(), "MachinePools are read from the informer, not live")

	t.Log("the MachinePool CRD is deleted: passes go on without errors and without asking for it")
	g.Expect(e.Client.Delete(ctx, mp)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(e.Client.Get(ctx, client.ObjectKeyFromObject(mp), &apiextensionsv1.CustomResourceDefinition{}))
	}, time.Minute, 200*time.Millisecond).Should(BeTrue())
	time.Sleep(3 * time.Second) // the served kinds settle
	got = steady("deleted")
	g.Expect(filterReqs(got, isDiscovery)).To(BeEmpty())
	g.Expect(filterReqs(got, func(r string) bool { return strings.Contains(r, "/machinepools") })).To(BeEmpty())
	g.Expect(inSync()).To(Equal(releases), "no pass failed")
}

func nsOf(i int) string { return fmt.Sprintf("served-%d", i) }

// waitFor polls cond until it holds or timeout passes.
func waitFor(cond func() bool, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}
