package framework

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	chartcommon "helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

const addonChartDir = "../../charts/template-drift-controller"

// renderAddon renders the add-on's chart as Helm installs it, for a
// server of the test control plane's version, and returns its Deployment
// and Services.
func renderAddon(t *testing.T, values map[string]any) *AddonChart {
	t.Helper()
	g := NewWithT(t)
	ch, err := loader.Load(addonChartDir)
	g.Expect(err).NotTo(HaveOccurred())
	cs := fake.NewClientset()
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.36.3", Major: "1", Minor: "36"}
	manifest, err := renderForServer(cs, ch, "flux-system", values)
	g.Expect(err).NotTo(HaveOccurred())
	chart, err := parseAddonManifest("flux-system", manifest)
	g.Expect(err).NotTo(HaveOccurred())
	return chart
}

// TestTranslateChartDeployment: the chart's Deployment runs as rendered,
// but for the two addresses the container listens on, which move to the
// loopback addresses given; the downward API resolves as the kubelet
// would; the probes and the metrics Service reach the right addresses.
func TestTranslateChartDeployment(t *testing.T) {
	g := NewWithT(t)
	chart := renderAddon(t, map[string]any{"eventsAddr": "http://127.0.0.1:9999/", "extraArgs": []any{"--no-such-flag"}})
	d, err := TranslateDeployment(chart.Deployment)
	g.Expect(err).NotTo(HaveOccurred())
	rendered := chart.Deployment.Spec.Template.Spec.Containers[0].Args
	g.Expect(d.Args).To(Equal(rendered))
	g.Expect(d.Ports()).To(Equal(2))
	addrs := []string{"127.0.0.1:1001", "127.0.0.1:1002"}
	args := d.ArgsFor(addrs)
	g.Expect(args).To(HaveLen(len(rendered)))
	g.Expect(args).To(ContainElements("--metrics-addr=127.0.0.1:1001", "--health-addr=127.0.0.1:1002",
		"--events-addr=http://127.0.0.1:9999/", "--no-such-flag"), "every other argument as rendered")
	for i, a := range args {
		if a != rendered[i] {
			g.Expect(a).To(Or(HavePrefix("--metrics-addr="), HavePrefix("--health-addr=")))
		}
	}
	g.Expect(d.Env).To(ConsistOf("RUNTIME_NAMESPACE=flux-system", "GOMEMLIMIT=1073741824"))
	g.Expect(d.liveness).To(Equal(probeAt{path: "/healthz", listen: 1}))
	g.Expect(d.readiness).To(Equal(probeAt{path: "/readyz", listen: 1}))
	g.Expect(chart.Services).To(HaveLen(1))
	addr, ok := d.PortAddr(addrs, chart.Services[0].Spec.Ports[0].TargetPort)
	g.Expect(ok).To(BeTrue())
	g.Expect(addr).To(Equal("127.0.0.1:1001"), "the metrics Service targets the metrics address")
}

// TestTranslateRefuses: what cannot run as the Deployment says is an
// error, never a guess.
func TestTranslateRefuses(t *testing.T) {
	cases := []struct {
		name   string                         // what the case proves
		mutate func(c *corev1.Container)      // changes the chart's container
		spec   func(s *appsv1.DeploymentSpec) // changes the Deployment
		want   string                         // the error says
	}{{
		name:   "an entrypoint override",
		mutate: func(c *corev1.Container) { c.Command = []string{"/bin/sh"} },
		want:   "overrides the image's entrypoint",
	}, {
		name: "a container port no argument binds",
		mutate: func(c *corev1.Container) {
			c.Ports = append(c.Ports, corev1.ContainerPort{Name: "extra", ContainerPort: 7777})
		},
		want: "container port extra (7777) is bound by no argument",
	}, {
		name: "a downward API field that is not translated",
		mutate: func(c *corev1.Container) {
			c.Env = append(c.Env, corev1.EnvVar{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}})
		},
		want: "field status.podIP is not translated",
	}, {
		name:   "a probe of a port no argument binds",
		mutate: func(c *corev1.Container) { c.ReadinessProbe.HTTPGet.Port = intstr.FromString("other") },
		want:   "the readiness probe asks port other",
	}, {
		name: "a second container",
		spec: func(s *appsv1.DeploymentSpec) {
			s.Template.Spec.Containers = append(s.Template.Spec.Containers, corev1.Container{Name: "sidecar"})
		},
		want: "want one container",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			d := renderAddon(t, nil).Deployment
			if tc.mutate != nil {
				tc.mutate(&d.Spec.Template.Spec.Containers[0])
			}
			if tc.spec != nil {
				tc.spec(&d.Spec)
			}
			_, err := TranslateDeployment(d)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

// renderForServer renders ch as release AddonReleaseName in namespace for
// the API server cs talks to, and returns the manifest Helm would store:
// every template but NOTES.txt and the hooks (Helm stores those apart), in
// install order, with Source comments.
func renderForServer(cs kubernetes.Interface, ch *chart.Chart, namespace string, values map[string]any) (string, error) {
	version, err := cs.Discovery().ServerVersion()
	if err != nil {
		return "", fmt.Errorf("failed to read the server's version: %w", err)
	}
	caps := chartcommon.DefaultCapabilities.Copy()
	caps.KubeVersion = chartcommon.KubeVersion{Version: version.GitVersion, Major: version.Major, Minor: version.Minor}
	top, err := chartutil.ToRenderValuesWithSchemaValidation(ch, values, chartcommon.ReleaseOptions{
		Name: AddonReleaseName, Namespace: namespace, Revision: 1, IsInstall: true}, caps, false)
	if err != nil {
		return "", fmt.Errorf("failed to check the values: %w", err)
	}
	files, err := engine.Render(ch, top)
	if err != nil {
		return "", fmt.Errorf("failed to render the chart: %w", err)
	}
	for name := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(files, name)
		}
	}
	_, manifests, err := releaseutil.SortManifests(files, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return "", fmt.Errorf("failed to sort the rendered manifests: %w", err)
	}
	var b strings.Builder
	for _, m := range manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	return b.String(), nil
}
