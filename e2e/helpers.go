//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/e2e/framework"
)

// observe records what Helm did with the pivoted templates, for the log.
func (r *pivotRun) observe(ctx context.Context, when string, ready *metav1.Condition) {
	m3mts, _ := framework.List(ctx, r.mgmt.Client, infra, "Metal3MachineTemplate", ns)
	m3dts, _ := framework.List(ctx, r.mgmt.Client, infra, "Metal3DataTemplate", ns)
	var b strings.Builder
	fmt.Fprintf(&b, "OBSERVED %s (%s): Ready=%s/%s: %s\n", when, r.in.Name, ready.Status, ready.Reason, ready.Message)
	for _, m := range m3mts {
		fmt.Fprintf(&b, "  Metal3MachineTemplate/%s image.url=%s dataTemplate=%s\n", m.GetName(), imageURL(&m), dataTemplate(&m))
	}
	for _, m := range m3dts {
		fmt.Fprintf(&b, "  Metal3DataTemplate/%s image-server=%s\n", m.GetName(), metaIP(&m))
	}
	fmt.Fprint(GinkgoWriter, b.String())
	_ = os.WriteFile(suite.artifacts+"/"+r.in.Name+"-observed.txt", []byte(b.String()), 0o644)
}

// refs returns the template references of the MachineDeployment and the
// KubeadmControlPlane, which must not change unless machines are meant to roll.
func (r *pivotRun) refs(ctx context.Context) map[string]string {
	md, err := framework.Get(ctx, r.mgmt.Client, "cluster.x-k8s.io/v1beta2", "MachineDeployment", ns, "mgmt-md0")
	Expect(err).NotTo(HaveOccurred())
	kcp, err := framework.Get(ctx, r.mgmt.Client, "controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", ns, "mgmt-cp")
	Expect(err).NotTo(HaveOccurred())
	get := func(o *unstructured.Unstructured, path ...string) string {
		s, _, _ := unstructured.NestedString(o.Object, path...)
		return s
	}
	return map[string]string{
		"md.infrastructureRef":  get(md, "spec", "template", "spec", "infrastructureRef", "name"),
		"md.configRef":          get(md, "spec", "template", "spec", "bootstrap", "configRef", "name"),
		"kcp.infrastructureRef": get(kcp, "spec", "machineTemplate", "spec", "infrastructureRef", "name"),
	}
}

func status(ctx context.Context, c client.Client, key client.ObjectKey, typ string) metav1.ConditionStatus {
	cond, _, err := framework.Condition(ctx, c, key, typ)
	if err != nil || cond == nil {
		return ""
	}
	return cond.Status
}

func reason(ctx context.Context, c client.Client, key client.ObjectKey, typ string) string {
	cond, _, err := framework.Condition(ctx, c, key, typ)
	if err != nil || cond == nil {
		return ""
	}
	return cond.Reason
}

func imageURL(o *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "image", "url")
	return s
}

func dataTemplate(o *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "dataTemplate", "name")
	return s
}

func metaIP(o *unstructured.Unstructured) string {
	strs, _, _ := unstructured.NestedSlice(o.Object, "spec", "metaData", "strings")
	for _, s := range strs {
		if m, ok := s.(map[string]any); ok && m["key"] == "image-server" {
			return fmt.Sprint(m["value"])
		}
	}
	return ""
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// awaitTemplatesInSync waits for the TemplatesInSync condition's reason,
// then logs the condition, seen when, and returns it.
func (r *pivotRun) awaitTemplatesInSync(ctx context.Context, wantReason, when string) *metav1.Condition {
	c := r.mgmt.Client
	Eventually(func() string { return reason(ctx, c, r.key, api.TemplatesInSyncCondition) }).Should(Equal(wantReason))
	cond, _, err := framework.Condition(ctx, c, r.key, api.TemplatesInSyncCondition)
	Expect(err).NotTo(HaveOccurred())
	fmt.Fprintf(GinkgoWriter, "OBSERVED TemplatesInSync (%s, %s): %s/%s: %s\n", r.in.Name, when, cond.Status, cond.Reason, cond.Message)
	return cond
}
