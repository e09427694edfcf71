package release

import (
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestName(t *testing.T) {
	long := strings.Repeat("a", 60)
	cases := []struct {
		name string             // what the case shows
		hr   helmv2.HelmRelease // the HelmRelease
		want string             // release name helm-controller uses
	}{
		{name: "metadata.name", hr: helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}, want: "cluster"},
		{name: "target namespace prefix", hr: helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
			Spec: helmv2.HelmReleaseSpec{TargetNamespace: "fleet"}}, want: "fleet-cluster"},
		{name: "releaseName wins", hr: helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
			Spec: helmv2.HelmReleaseSpec{TargetNamespace: "fleet", ReleaseName: "mgmt"}}, want: "mgmt"},
		// helm-controller v1.6.4's rule: the first 40 characters, "-", and 12
		// hex of the sha256 of the whole name (computed independently).
		{name: "shortened above 53", hr: helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: long}},
			want: strings.Repeat("a", 40) + "-11ee391211c6"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := Name(&tc.hr)
			g.Expect(got).To(Equal(tc.want))
			g.Expect(len(got)).To(BeNumerically("<=", 53))
		})
	}
}
