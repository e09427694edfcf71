package main

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/monitoring"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// TestMetricsEndpointServesShippedQueries runs the controller binary with
// leader election, as the chart deploys it, lets it correct a drifted
// release, then scrapes its /metrics: every series the alerts and the
// dashboard query is served, with every label they match or group on
// (controller-runtime's and the workqueue's included, which only a running
// controller serves). A renamed metric or label fails here.
func TestMetricsEndpointServesShippedQueries(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	bin := buildController(t)
	const runtimeNS, ns = "tdc-metrics", "metrics-scrape"
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: runtimeNS}})).To(Succeed())
	_, err := testenv.Pivot{Namespace: ns, Live: testenv.Bootstrap, Release: testenv.Management, ApplyMethod: "csa",
		Annotations: map[string]string{api.ModeAnnotation: api.ModeEnabled}}.Install(ctx, env)
	g.Expect(err).NotTo(HaveOccurred())

	var metricsAddr string
	p, err := testenv.StartServing("tdc-metrics", bin, 2, 1, func(a []string) []string {
		metricsAddr = a[0]
		return []string{"--metrics-addr=" + a[0], "--health-addr=" + a[1], "--watch-all-namespaces", "--enable-leader-election"}
	}, []string{"KUBECONFIG=" + env.KubeConfigPath, "RUNTIME_NAMESPACE=" + runtimeNS}, t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(p.Stop)

	g.Eventually(func() string {
		hr := &helmv2.HelmRelease{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cluster"}, hr); err != nil {
			return err.Error()
		}
		if c := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition); c != nil {
			return c.Reason
		}
		return ""
	}, 2*time.Minute, time.Second).Should(Equal(api.DriftCorrectedReason), "the controller corrects the release; log:\n%s", p.Logs())

	root, err := testenv.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	_, queries, err := monitoring.Shipped(root)
	g.Expect(err).NotTo(HaveOccurred())
	all := func(string) bool { return true }
	// The condition's series follows the condition's write, and the
	// histogram the pass's end: scrape until both are there.
	g.Eventually(func() ([]string, error) {
		exposed, err := scrape(metricsAddr)
		if err != nil {
			return nil, err
		}
		return monitoring.Check(queries, exposed, all)
	}, 30*time.Second, time.Second).Should(BeEmpty(), "the series and labels the rules and the dashboard query")
}

// scrape reads the exposition the controller serves at addr.
func scrape(addr string) (monitoring.Exposed, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, fmt.Errorf("failed to scrape the controller's metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("failed to scrape the controller's metrics: HTTP %d", resp.StatusCode)
	}
	return monitoring.ParseExposition(resp.Body)
}
