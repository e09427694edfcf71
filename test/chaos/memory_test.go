package chaos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	runtimeclient "github.com/fluxcd/pkg/runtime/client"
	. "github.com/onsi/gomega"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/templatedrift/template-drift-controller/internal/release"
)

func TestMemoryLimit(t *testing.T) {
	tests := []struct {
		name    string
		values  string
		want    int64
		wantErr string
	}{
		{name: "the chart's shape", values: "resources:\n  requests: {memory: 64Mi}\n  limits:\n    cpu: \"1\"\n    memory: 1Gi\n", want: 1 << 30},
		{name: "a decimal size", values: "resources: {limits: {memory: 500M}}", want: 500_000_000},
		{name: "no limit", values: "resources: {requests: {memory: 64Mi}}", wantErr: "resources.limits.memory"},
		{name: "not a size", values: "resources: {limits: {memory: lots}}", wantErr: `"lots"`},
		{name: "zero", values: "resources: {limits: {memory: \"0\"}}", wantErr: "not a positive size"},
		{name: "not YAML", values: "resources: [", wantErr: "failed to parse the chart's values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := memoryLimit([]byte(tt.values))
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
	t.Run("the chart's default", func(t *testing.T) {
		g := NewWithT(t)
		got, err := chartMemoryLimit()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(BeNumerically(">", 64<<20), "the limit is above the chart's request")
	})
}

// testKubeconfig is a kubeconfig with inline credentials, as envtest
// writes them.
func testKubeconfig(g Gomega) []byte {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthorityData: []byte("ca")}
	cfg.AuthInfos["user"] = &clientcmdapi.AuthInfo{ClientCertificateData: []byte("cert"), ClientKeyData: []byte("key")}
	cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "user"}
	cfg.CurrentContext = "default"
	b, err := clientcmd.Write(*cfg)
	g.Expect(err).NotTo(HaveOccurred())
	return b
}

func TestRenameKubeconfig(t *testing.T) {
	g := NewWithT(t)
	base := testKubeconfig(g)
	a, err := renameKubeconfig(base, "memory-tenant-0-1")
	g.Expect(err).NotTo(HaveOccurred())
	b, err := renameKubeconfig(base, "memory-tenant-0-2")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a).NotTo(Equal(b), "each rewrite is a distinct kubeconfig")

	cfg, err := clientcmd.Load(a)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.CurrentContext).To(Equal("memory-tenant-0-1"))
	g.Expect(cfg.Contexts).To(HaveLen(1))
	g.Expect(cfg.Clusters["memory-tenant-0-1"].Server).To(Equal("https://127.0.0.1:6443"))
	g.Expect(cfg.AuthInfos["memory-tenant-0-1"].ClientCertificateData).To(Equal([]byte("cert")))

	// The controller parses it as Flux does, and reaches the same server
	// with the same credentials.
	rc, err := runtimeclient.KubeConfigFromBytes(a)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rc.Host).To(Equal("https://127.0.0.1:6443"))
	g.Expect(rc.CertData).To(Equal([]byte("cert")))
	g.Expect(rc.CAData).To(Equal([]byte("ca")))

	for name, bad := range map[string][]byte{
		"not a kubeconfig":   []byte("clusters: ["),
		"no current context": []byte("apiVersion: v1\nkind: Config\nclusters: []\n"),
	} {
		_, err := renameKubeconfig(bad, "x")
		g.Expect(err).To(HaveOccurred(), name)
	}
}

func TestLargeRelease(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	_, desired, method := Manifests(CaseRotate)
	rel := largeRelease("memory-large-00", desired, method, 2, 7)
	cs := fake.NewClientset()
	secrets := cs.CoreV1().Secrets("memory-large-00")
	g.Expect(storage.Init(driver.NewSecrets(secrets)).Create(rel)).To(Succeed())
	s, err := secrets.Get(ctx, release.SecretName("cluster", 2), metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	// Random data does not compress: the stored release is the data's size
	// in base64, several hundred KiB, and fits a Secret.
	var total int
	for _, v := range s.Data {
		total += len(v)
	}
	g.Expect(len(s.Data["release"])).To(BeNumerically(">", largeRaw))
	g.Expect(total).To(BeNumerically("<", secretLimit*9/10), "room under the Secret limit")

	// The values and hook come back as stored, and so does the digest the
	// history records: the controller's verification passes.
	stored, err := storage.Init(driver.NewSecrets(secrets)).Get("cluster", 2)
	g.Expect(err).NotTo(HaveOccurred())
	got, ok := stored.(*helmv1.Release)
	g.Expect(ok).To(BeTrue())
	g.Expect(got.Config["hostile"]).To(HaveLen(len(rel.Config["hostile"].(map[string]any))))
	g.Expect(got.Hooks).To(HaveLen(1))
	g.Expect(len(got.Hooks[0].Manifest)).To(BeNumerically(">", largeRaw/3))
	g.Expect(got.Manifest).To(Equal(desired))
	g.Expect(release.SnapshotDigest(got)).To(Equal(release.SnapshotDigest(rel)))

	// The data is the seed's: the same for the same seed, new for another.
	v1, h1 := largePayload(7, 3*largeChunk)
	v2, h2 := largePayload(7, 3*largeChunk)
	v3, _ := largePayload(8, 3*largeChunk)
	g.Expect(v1).To(Equal(v2))
	g.Expect(h1.Manifest).To(Equal(h2.Manifest))
	g.Expect(v1).NotTo(Equal(v3))
	g.Expect(v1["hostile"]).To(HaveLen(2), "two thirds of the data in the values, one chunk each")
}

func TestGauges(t *testing.T) {
	exposition := `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 212
go_memstats_heap_inuse_bytes 2.4567808e+07
go_memstats_heap_alloc_bytes 2e+07
go_memstats_heap_inuse_bytes_other{x="y"} 1
rest_client_requests_total{code="200"} 12
`
	tests := []struct {
		name    string
		text    string
		names   []string
		want    map[string]float64
		wantErr string
	}{
		{name: "the gauges", text: exposition, names: []string{heapInuse, heapAlloc, goroutines},
			want: map[string]float64{heapInuse: 24567808, heapAlloc: 20_000_000, goroutines: 212}},
		{name: "a gauge missing", text: exposition, names: []string{"go_threads"}, wantErr: "go_threads"},
		{name: "not a number", text: "go_goroutines many\n", names: []string{goroutines}, wantErr: "go_goroutines many"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := gauges(strings.NewReader(tt.text), tt.names...)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestFlagValue(t *testing.T) {
	g := NewWithT(t)
	cmdline := []byte("/bin/tdc\x00--metrics-addr=127.0.0.1:4321\x00--health-addr=127.0.0.1:4322\x00")
	g.Expect(flagValue(cmdline, "--metrics-addr")).To(Equal("127.0.0.1:4321"))
	g.Expect(flagValue(cmdline, "--health-addr")).To(Equal("127.0.0.1:4322"))
	g.Expect(flagValue(cmdline, "--metrics")).To(BeEmpty())
}

func TestCountRequests(t *testing.T) {
	g := NewWithT(t)
	lines := []string{
		`{"stage":"ResponseComplete","verb":"head","requestURI":"/livez/ping","user":{"username":"` + ControllerUser + `"}}`,
		`{"stage":"ResponseComplete","verb":"head","requestURI":"/livez/ping?timeout=30s","user":{"username":"` + ControllerUser + `"}}`,
		`{"stage":"ResponseStarted","verb":"head","requestURI":"/livez/ping","user":{"username":"` + ControllerUser + `"}}`,
		`{"stage":"ResponseComplete","verb":"head","requestURI":"/livez/ping","user":{"username":"admin"}}`,
		`{"stage":"ResponseComplete","verb":"get","requestURI":"/api/v1/namespaces/a/secrets/kubeconfig","user":{"username":"` + ControllerUser + `"}}`,
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	g.Expect(os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)).To(Succeed())
	n, err := countRequests(path, ControllerUser, pingPath)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(2))
	_, err = countRequests(filepath.Join(t.TempDir(), "none"), ControllerUser, pingPath)
	g.Expect(err).To(MatchError(ContainSubstring("failed to open the audit log")))
}

func TestMemoryScope(t *testing.T) {
	g := NewWithT(t)
	_, desired, _ := Manifests(CaseInPlace)
	objs, err := ManifestObjects(rewriterNamespace(0), desired)
	g.Expect(err).NotTo(HaveOccurred())
	s := NewScope(objs, "cluster")
	write := func(verb, resource, sub, name string) Write {
		var w Write
		w.Verb, w.ObjectRef.Namespace, w.ObjectRef.Resource, w.ObjectRef.Subresource, w.ObjectRef.Name = verb, rewriterNamespace(0), resource, sub, name
		return w
	}
	g.Expect(s.OutOfScope(write("patch", "metal3machinetemplates", "", objs[0].Name))).To(BeEmpty(), "a template of the rewriter's release")
	g.Expect(s.OutOfScope(write("patch", "helmreleases", "status", "cluster"))).To(BeEmpty(), "its HelmRelease's status")
	for _, w := range []Write{
		write("update", "secrets", "", kubeConfigName),
		write("patch", "secrets", "", kubeConfigName),
		write("create", "secrets", "", release.SecretName("cluster", 3)),
		write("patch", "helmreleases", "", "cluster"),
	} {
		g.Expect(s.OutOfScope(w)).NotTo(BeEmpty(), w.String())
	}
}
