package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestProposeWithoutSpecValues checks that --set applies to a HelmRelease
// with no spec.values (its values come from valuesFrom or the chart's
// defaults), as the same change given by --values does.
func TestProposeWithoutSpecValues(t *testing.T) {
	g := NewWithT(t)
	live := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "cluster"},
		Spec: helmv2.HelmReleaseSpec{ValuesFrom: []helmv2.ValuesReference{
			{Kind: "ConfigMap", Name: "cluster-values"},
		}},
	}
	file := filepath.Join(t.TempDir(), "values.yaml")
	g.Expect(os.WriteFile(file, []byte("kubeletArgs:\n  max-pods: \"200\"\n"), 0o600)).To(Succeed())

	for _, o := range []*previewOptions{
		{sets: []string{"kubeletArgs.max-pods=200"}},
		{valuesFiles: []string{file}},
	} {
		hr, err := o.propose(context.Background(), nil, live, nil, nil)
		g.Expect(err).NotTo(HaveOccurred(), "sets %v, values %v", o.sets, o.valuesFiles)
		g.Expect(hr.Spec.Values).NotTo(BeNil())
		var values map[string]any
		g.Expect(json.Unmarshal(hr.Spec.Values.Raw, &values)).To(Succeed())
		g.Expect(values).To(HaveKeyWithValue("kubeletArgs", HaveKey("max-pods")))
		g.Expect(hr.Spec.ValuesFrom).To(Equal(live.Spec.ValuesFrom), "valuesFrom is kept")
	}
	g.Expect(live.Spec.Values).To(BeNil(), "the live HelmRelease is not changed")
}
