//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/e2e/framework"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// The add-on as its chart deploys it, and the events Flux Alerts get from it.

const (
	// addonNamespace is where the chart is installed, next to Flux.
	addonNamespace = "flux-system"
	// tenantAccount is the lockdown's defaultServiceAccount, created in the
	// HelmRelease's namespace.
	tenantAccount = "tenant"
	// alertName names the Provider and the Alert.
	alertName = "template-drift"
)

// The event metadata keys the add-on sets for a HelmRelease's events: its
// group, a slash, fluxcd/pkg/apis/event's key.
var (
	revisionKey = helmv2.GroupVersion.Group + "/" + eventv1.MetaRevisionKey
	tokenKey    = helmv2.GroupVersion.Group + "/" + eventv1.MetaTokenKey
)

// addonValues are the chart values the suite installs with: the events go
// to the management cluster's notification-controller, and the template
// kinds this control plane serves are granted (its fixture
// LockedMachineTemplate matches the default patterns).
func (r *pivotRun) addonValues() map[string]any {
	v := map[string]any{
		"eventsAddr": r.mgmtFlux.EventsURL,
		"logLevel":   "debug",
		"templateKinds": map[string]any{"rbac": []any{
			map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io",
				"resources": []any{"metal3machinetemplates", "metal3datatemplates", "lockedmachinetemplates"}},
			map[string]any{"apiGroup": "bootstrap.cluster.x-k8s.io",
				"resources": []any{"kubeadmconfigtemplates", "rke2configtemplates"}},
		}},
	}
	if r.in.Lockdown {
		v["defaultServiceAccount"] = tenantAccount
	}
	return v
}

// startAddon installs the add-on as config/flux documents, with the real
// helm-controller from the OCI chart source-controller pulls, and runs the
// binary as the Deployment says, as the chart's ServiceAccount.
func (r *pivotRun) startAddon(ctx context.Context) {
	shape := "default"
	if r.in.Lockdown {
		shape = "lockdown (defaultServiceAccount: " + tenantAccount + ")"
		By("the lockdown: the tenant's ServiceAccount in the release's namespace may read Helm's storage and write its Cluster API objects")
		Expect(testenv.GrantTenant(ctx, r.mgmt.Client, ns, tenantAccount, testenv.TenantRules())).To(Succeed())
	}
	By("installing the add-on with helm-controller from its OCI chart (config/flux), " + shape +
		", and running it as its Deployment says, with a token of its ServiceAccount")
	key, err := framework.ApplyFluxInstall(ctx, r.mgmt, suite.fluxDir, suite.addonURL, r.addonValues())
	Expect(err).NotTo(HaveOccurred())
	Expect(key.Namespace).To(Equal(addonNamespace))
	Eventually(func() error { return framework.Installed(ctx, r.mgmt.Client, key) }).
		Should(Succeed(), "helm-controller installs the chart source-controller pulled from the OCI registry")
	chart, err := framework.DeployedAddon(ctx, r.mgmt, addonNamespace)
	Expect(err).NotTo(HaveOccurred())
	_ = os.WriteFile(filepath.Join(suite.artifacts, r.in.Name+"-addon-manifest.yaml"), []byte(chart.Manifest), 0o644)
	r.addon, err = framework.StartAddon(ctx, r.in.Name+"-template-drift-controller", r.mgmt, chart, suite.bins.Addon, suite.artifacts)
	Expect(err).NotTo(HaveOccurred())
	sa := chart.Deployment.Spec.Template.Spec.ServiceAccountName
	Expect(r.addon.User).To(Equal("system:serviceaccount:"+addonNamespace+":"+sa), "no admin identity")
	Expect(chart.Services).NotTo(BeEmpty())
	// The controller's series appear once it holds the leader Lease, which
	// the chart's leader-election Role lets it take in its namespace.
	Eventually(func() (string, error) { return r.addon.Scrape(chart.Services[0], "http-metrics", "/metrics") }).
		Should(ContainSubstring(`controller="`+api.ControllerName+`"`), "the metrics Service reaches the controller's metrics")
}

// expectAddonRefusedNothing fails on what a missing RBAC verb shows as in
// the add-on's log: a request the API server refused, or a template kind
// it may not list and watch.
func (r *pivotRun) expectAddonRefusedNothing() {
	if r.addon == nil {
		return
	}
	By("the add-on was refused nothing and watches every template kind")
	Expect(r.addon.Exited()).To(BeFalse(), "the add-on is still running")
	var refused []string
	for _, line := range strings.Split(r.addon.Logs(), "\n") {
		if strings.Contains(strings.ToLower(line), "forbidden") || strings.Contains(line, "Not watching kinds") {
			refused = append(refused, line)
		}
	}
	Expect(refused).To(BeEmpty(), "see %s", r.addon.LogPath)
}

// startReceiver creates a `generic` Provider whose address is a receiver
// on 127.0.0.1 and an Alert for the namespace's HelmRelease events, then
// waits until notification-controller forwards one of helm-controller's,
// so that a missing event of the add-on's later is the add-on's.
func (r *pivotRun) startReceiver(ctx context.Context) {
	By("a Flux Alert for the HelmRelease events, with a generic Provider posting to a receiver on 127.0.0.1")
	r.receiver = framework.StartEventReceiver()
	Expect(framework.CreateAlert(ctx, r.mgmt.Client, ns, alertName, r.receiver.URL)).To(Succeed())
}

// expectHelmControllerForwarded waits for one of helm-controller's events
// about the HelmRelease at the receiver.
func (r *pivotRun) expectHelmControllerForwarded() {
	Eventually(func() []eventv1.Event { return r.receiver.Events() }).Should(ContainElement(And(
		HaveField("InvolvedObject.Name", r.key.Name), HaveField("ReportingController", "helm-controller"))),
		"notification-controller forwards helm-controller's events")
}

// releaseRef finds the release version an event's message names.
var releaseRef = regexp.MustCompile(`release ` + ns + `/cluster\.v(\d+)`)

// expectForwarded waits until the receiver got the add-on's event reason
// about the HelmRelease, then checks its metadata against the status.history
// snapshot of the release the message names: the chart version as the
// revision, and no token (notification-controller deduplicates on it, then
// removes it). The Kubernetes Event of the same reason carries both under
// the HelmRelease group's keys, the token being the release's config
// digest.
func (r *pivotRun) expectForwarded(ctx context.Context, reason string) {
	By("notification-controller forwards the add-on's " + reason + " event to the Alert's provider, with helm-controller's metadata")
	ours := And(HaveField("InvolvedObject.Kind", helmv2.HelmReleaseKind), HaveField("InvolvedObject.Name", r.key.Name),
		HaveField("InvolvedObject.Namespace", r.key.Namespace),
		HaveField("ReportingController", api.ControllerName), HaveField("Reason", reason))
	Eventually(func() []eventv1.Event { return r.receiver.Events() }).Should(ContainElement(ours))
	// The first one: a pass may tell corrections more than once (a
	// rollout approved after the others were made).
	var got eventv1.Event
	for _, e := range r.receiver.Events() {
		if ok, _ := ours.Match(e); ok {
			got = e
			break
		}
	}
	received, _ := json.MarshalIndent(got, "", "  ")
	fmt.Fprintf(GinkgoWriter, "RECEIVED %s\n", received)
	_ = os.WriteFile(filepath.Join(suite.artifacts, r.in.Name+"-received-"+reason+".json"), received, 0o644)
	m := releaseRef.FindStringSubmatch(got.Message)
	Expect(m).NotTo(BeNil(), "the message names the release")
	version, _ := strconv.Atoi(m[1])
	snap := r.snapshot(ctx, version)
	Expect(snap.ChartVersion).NotTo(BeEmpty())
	// notification-controller forwards the metadata of the involved
	// object's group without the group prefix, and never the token.
	Expect(got.Metadata).To(HaveKeyWithValue(eventv1.MetaRevisionKey, snap.ChartVersion))
	Expect(got.Metadata).NotTo(HaveKey(eventv1.MetaTokenKey), "notification-controller strips the token")

	events := &corev1.EventList{}
	Expect(r.mgmt.Client.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	var annotations []map[string]string
	for _, e := range events.Items {
		if e.Reason == reason && e.InvolvedObject.Name == r.key.Name {
			annotations = append(annotations, e.Annotations)
		}
	}
	Expect(annotations).To(ContainElement(And(HaveKeyWithValue(revisionKey, snap.ChartVersion),
		HaveKeyWithValue(tokenKey, snap.ConfigDigest))), "the Kubernetes Event carries the revision and the token")
}

// snapshot returns the HelmRelease's status.history snapshot of version.
func (r *pivotRun) snapshot(ctx context.Context, version int) *helmv2.Snapshot {
	hr := &helmv2.HelmRelease{}
	Expect(r.mgmt.Client.Get(ctx, r.key, hr)).To(Succeed())
	for _, s := range hr.Status.History {
		if s.Version == version {
			return s
		}
	}
	Fail(fmt.Sprintf("status.history has no snapshot of version %d", version))
	return nil
}
