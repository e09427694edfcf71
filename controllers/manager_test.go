package controllers_test

import (
	"context"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/runtime/events"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/controllers"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// TestManagerWatches runs the controller as it runs in production: a
// manager, watches, Flux's event recorder. Opting in heals the templates,
// drift introduced later is healed within seconds through the template
// watch, and the events are real core Events on the HelmRelease, which is
// what `flux events --for HelmRelease/cluster` lists.
func TestManagerWatches(t *testing.T) {
	w := newWorld(t, scenario{annotations: map[string]string{api.ModeAnnotation: api.ModeWarn}, live: bootstrap, release: mgmt, applyMethod: "csa"})
	g := w.g
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	t.Log("the HelmRelease has values, which the manager's cache drops")
	values := `{"cluster":{"name":"mgmt","workers":3}}`
	hr := &helmv2.HelmRelease{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(w.hr), hr)).To(Succeed())
	hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(values)}
	g.Expect(env.Client.Update(ctx, hr)).To(Succeed())

	mgr := newTestManager(g, env.Config)
	recorder, err := events.NewRecorder(ctrl.Log, "", api.ControllerName, events.WithManager(mgr))
	g.Expect(err).NotTo(HaveOccurred())
	kinds, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = controllers.Setup(ctx, mgr, controllers.Config{
		Kinds: kinds, DeleteWait: 5 * time.Second, ResyncInterval: 10 * time.Minute,
		Events: recorder, Metrics: prometheus.NewRegistry(), MaxConcurrentReconciles: 2,
	})
	g.Expect(err).NotTo(HaveOccurred())
	done := make(chan error)
	go func() { done <- mgr.Start(ctx) }()
	defer func() { cancel(); g.Expect(<-done).To(Succeed()) }()

	t.Log("warn mode reports the drift")
	g.Eventually(func() string { c := w.condition(); return reasonOf(c) }, 20*time.Second, 200*time.Millisecond).Should(Equal(api.DriftDetectedReason))

	t.Log("opting in heals the templates in place")
	w.setAnnotations(enabled)
	url := func() string {
		return str(w.get(m3, "Metal3MachineTemplate", "mgmt-md0"), "spec", "template", "spec", "image", "url")
	}
	g.Eventually(url, 20*time.Second, 200*time.Millisecond).Should(Equal(mgmt.ImageURL))
	g.Eventually(func() string { return reasonOf(w.condition()) }, 10*time.Second, 200*time.Millisecond).Should(Equal(api.DriftCorrectedReason))

	t.Log("drift introduced later is healed through the template watch")
	m3mt := w.get(m3, "Metal3MachineTemplate", "mgmt-md0")
	g.Expect(unstructured.SetNestedField(m3mt.Object, bootstrap.ImageURL, "spec", "template", "spec", "image", "url")).To(Succeed())
	g.Expect(env.Client.Update(ctx, m3mt)).To(Succeed())
	start := time.Now()
	g.Eventually(url, 10*time.Second, 100*time.Millisecond).Should(Equal(mgmt.ImageURL))
	t.Logf("drift introduced after start was healed in %s", time.Since(start).Round(time.Millisecond))

	t.Log("the events are core Events on the HelmRelease")
	g.Eventually(func() []string {
		var list corev1.EventList
		g.Expect(env.Client.List(ctx, &list, client.InNamespace(w.ns))).To(Succeed())
		var reasons []string
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == "HelmRelease" && e.InvolvedObject.Name == "cluster" {
				reasons = append(reasons, e.Reason)
			}
		}
		return reasons
	}, 10*time.Second, 200*time.Millisecond).Should(ContainElements(api.TemplateDriftDetectedEvent, api.TemplateDriftCorrectedEvent))

	t.Log("the condition's writes kept the values the cache dropped")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(w.hr), hr)).To(Succeed())
	g.Expect(hr.Spec.Values).NotTo(BeNil())
	g.Expect(hr.Spec.Values.Raw).To(MatchJSON(values))
	g.Expect(apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition)).NotTo(BeNil())
}

// newTestManager is a manager as the binary builds one (its scheme, the
// HelmRelease cache's transform), with its metrics and probes off. Several
// tests of this process run a controller of the same name: the name's
// uniqueness check is off.
func newTestManager(g Gomega, cfg *rest.Config) ctrl.Manager {
	skip := true
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 testenv.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  ctrlcache.Options{DefaultTransform: controllers.TrimHelmRelease()},
		Controller:             ctrlconfig.Controller{SkipNameValidation: &skip},
	})
	g.Expect(err).NotTo(HaveOccurred())
	return mgr
}

func reasonOf(c *metav1.Condition) string {
	if c == nil {
		return ""
	}
	return c.Reason
}
