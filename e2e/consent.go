//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/e2e/framework"
)

// lockedPool is the MachineDeployment of the chart's lockedPool, and the
// locked machine template it was installed with.
const lockedPool = "mgmt-locked"

// rolloutID reads a rollout id from a condition message.
var rolloutID = regexp.MustCompile(`rollout ([0-9a-f]{10})`)

// lockedPoolRef is the machine template the locked pool's MachineDeployment
// references now.
func (r *pivotRun) lockedPoolRef(ctx context.Context) string {
	md, err := framework.Get(ctx, r.mgmt.Client, "cluster.x-k8s.io/v1beta2", "MachineDeployment", ns, lockedPool)
	Expect(err).NotTo(HaveOccurred())
	name, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
	return name
}

// approveThenRoll is the rollout consent with the real helm-controller and
// Cluster API managers. The locked pool's template kept the bootstrap image
// through the move and can only be corrected by a rotation that repoints,
// and so rolls, its MachineDeployment. Under the default policy the
// rotation waits, named in the condition with the MachineDeployment, its
// Machines and the rollout's id, while the rest of the release is healed;
// the operator approves it with `kubectl annotate` (the merge patch kubectl
// sends), and it rolls: the MachineDeployment is repointed and its
// controller makes a MachineSet from the replacement.
func (r *pivotRun) approveThenRoll(ctx context.Context) {
	c := r.mgmt.Client
	By("a rotation that would roll the locked pool waits for approval")
	cond := r.awaitTemplatesInSync(ctx, api.RolloutAwaitingApprovalReason, "awaiting approval")
	Expect(cond.Message).To(MatchRegexp(`LockedMachineTemplate/` + lockedPool + `: waits for approval of rollout [0-9a-f]{10}: would rotate to ` +
		lockedPool + `-[0-9a-f]{10}, replacing the Machines of MachineDeployment ` + ns + `/` + lockedPool + ` \(0 Machines\)`))
	Expect(cond.Message).To(ContainSubstring("Approve with: kubectl -n " + ns + " annotate helmrelease cluster " + api.ApproveRolloutAnnotation + "="))
	Consistently(func() string { return r.lockedPoolRef(ctx) }, "3s").Should(Equal(lockedPool), "not repointed while it waits")
	locked, err := framework.List(ctx, c, infra, "LockedMachineTemplate", ns)
	Expect(err).NotTo(HaveOccurred())
	Expect(locked).To(HaveLen(1), "no replacement while it waits")

	By("kubectl annotate approves the rollout, and it is made")
	id := rolloutID.FindStringSubmatch(cond.Message)[1]
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, api.ApproveRolloutAnnotation, id)
	hr := framework.NewClusterHelmRelease(ns, framework.ClusterValues{}, r.in.SSA)
	hr.SetName(r.key.Name)
	Expect(c.Patch(ctx, hr, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
	Eventually(func() string { return r.lockedPoolRef(ctx) }).Should(MatchRegexp(`^` + lockedPool + `-[0-9a-f]{10}$`))
	replacement := r.lockedPoolRef(ctx)
	Eventually(func() []string { return r.machineSetInfraRefs(ctx) }).Should(ContainElement(replacement),
		"the MachineDeployment controller rolls out a MachineSet from the replacement")
	Eventually(func() string {
		cond, _, _ := framework.Condition(ctx, c, r.key, api.TemplatesInSyncCondition)
		if cond == nil {
			return ""
		}
		return cond.Message
	}).Should(ContainSubstring("Approved rollouts made: " + id))
}

// machineSetInfraRefs are the machine templates the MachineSets clone from.
func (r *pivotRun) machineSetInfraRefs(ctx context.Context) []string {
	mss, err := framework.List(ctx, r.mgmt.Client, "cluster.x-k8s.io/v1beta2", "MachineSet", ns)
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, ms := range mss {
		name, _, _ := unstructured.NestedString(ms.Object, "spec", "template", "spec", "infrastructureRef", "name")
		out = append(out, name)
	}
	return out
}
