package chaos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/templatedrift/template-drift-controller/api"
)

func TestExpectationMet(t *testing.T) {
	denied := expectation{Reason: api.AccessDeniedReason, Contains: []string{"tenant", "forbidden"}}
	victim := expectation{Reason: api.NoDriftDetectedReason}
	cond := func(s metav1.ConditionStatus, reason, msg string) *metav1.Condition {
		return &metav1.Condition{Status: s, Reason: reason, Message: msg}
	}
	cases := []struct {
		name string
		e    expectation
		c    *metav1.Condition
		// want is a substring of the shortfall, "" for none.
		want string
	}{
		{"the reason and every substring", denied, cond(metav1.ConditionFalse, api.AccessDeniedReason, "as tenant: forbidden"), ""},
		{"no condition", denied, nil, "no TemplatesInSync condition"},
		{"another reason", denied, cond(metav1.ConditionTrue, api.DriftCorrectedReason, "corrected"), "reason DriftCorrected"},
		{"a substring missing", denied, cond(metav1.ConditionFalse, api.AccessDeniedReason, "as tenant"), `does not say "forbidden"`},
		{"the victim in sync", victim, cond(metav1.ConditionTrue, api.NoDriftDetectedReason, "in sync"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := tc.e.met(tc.c)
			if tc.want == "" {
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(got).To(ContainSubstring(tc.want))
		})
	}
}

func TestPlaceIn(t *testing.T) {
	g := NewWithT(t)
	got := placeIn("kind: A\nmetadata:\n  name: a\n---\nkind: B\nmetadata:\n  name: b\n", "victim")
	g.Expect(strings.Count(got, "metadata:\n  namespace: victim\n")).To(Equal(2))
}

// TestFileKubeconfig: the hostile kubeconfig names the controller's
// credentials as files, which Flux's kubeconfig loader refuses.
func TestFileKubeconfig(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	own := clientcmdapi.NewConfig()
	own.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443"}
	own.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: []byte("CERT"), ClientKeyData: []byte("KEY")}
	own.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	own.CurrentContext = "x"
	b, err := clientcmd.Write(*own)
	g.Expect(err).NotTo(HaveOccurred())
	out, err := fileKubeconfig(b, dir)
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := clientcmd.Load(out)
	g.Expect(err).NotTo(HaveOccurred())
	u := cfg.AuthInfos["u"]
	g.Expect(u.ClientCertificateData).To(BeEmpty())
	g.Expect(u.ClientCertificate).To(Equal(filepath.Join(dir, "controller.crt")))
	g.Expect(os.ReadFile(u.ClientKey)).To(Equal([]byte("KEY")))
}
