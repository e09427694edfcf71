package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// shardKey is Flux's sharding label.
const shardKey = "sharding.fluxcd.io/key"

// TestLeaderElectionIDPerShard: each shard elects its own leader, as
// helm-controller's shards do; an unsharded instance keeps the plain name.
func TestLeaderElectionIDPerShard(t *testing.T) {
	g := NewWithT(t)
	base := api.ControllerName + "-leader-election"
	g.Expect(leaderElectionID("")).To(Equal(base))
	one, two := leaderElectionID(shardKey+" in (shard1)"), leaderElectionID(shardKey+" in (shard2)")
	g.Expect(one).To(MatchRegexp("^" + base + "-[0-9a-f]{8}$"))
	g.Expect(one).NotTo(Equal(two))
	g.Expect(leaderElectionID(shardKey+" in (shard1)")).To(Equal(one), "stable")
}

// TestTwoShards runs two controller processes on one API server, sharded
// the way Flux shards (--watch-label-selector on sharding.fluxcd.io/key),
// each with leader election on. Each elects itself on its own Lease, and
// each drifted release is corrected by exactly one of them: its shard.
func TestTwoShards(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	bin := buildController(t)
	const runtimeNS = "tdc-shards"
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: runtimeNS}})).To(Succeed())

	shardOf := map[string]string{}
	for i := 0; i < 4; i++ {
		ns, shard := fmt.Sprintf("shards-%d", i), fmt.Sprintf("shard%d", i%2+1)
		hr, err := testenv.Pivot{Namespace: ns, Live: testenv.Bootstrap, Release: testenv.Management, ApplyMethod: "csa",
			Annotations: map[string]string{api.ModeAnnotation: api.ModeEnabled}}.Install(ctx, env)
		g.Expect(err).NotTo(HaveOccurred())
		base := hr.DeepCopy()
		hr.SetLabels(map[string]string{shardKey: shard})
		g.Expect(env.Client.Patch(ctx, hr, client.MergeFrom(base))).To(Succeed())
		shardOf[ns] = shard
	}

	artifacts := t.TempDir()
	var procs = map[string]*testenv.Process{}
	for _, shard := range []string{"shard1", "shard2"} {
		selector := shardKey + " in (" + shard + ")"
		p, err := testenv.StartServing("tdc-"+shard, bin, 2, 1, func(a []string) []string {
			return []string{"--metrics-addr=" + a[0], "--health-addr=" + a[1], "--watch-all-namespaces",
				"--enable-leader-election", "--watch-label-selector=" + selector, "--log-level=debug"}
		}, []string{"KUBECONFIG=" + env.KubeConfigPath, "RUNTIME_NAMESPACE=" + runtimeNS}, artifacts)
		g.Expect(err).NotTo(HaveOccurred())
		t.Cleanup(p.Stop)
		procs[shard] = p
	}

	for ns := range shardOf {
		g.Eventually(func() string {
			hr := &helmv2.HelmRelease{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cluster"}, hr); err != nil {
				return err.Error()
			}
			if c := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition); c != nil {
				return c.Reason
			}
			return ""
		}, 2*time.Minute, time.Second).Should(Equal(api.DriftCorrectedReason), "HelmRelease %s/cluster is corrected", ns)
	}

	// Each correction is logged by the process that made it, with the
	// HelmRelease it worked for.
	namespace := regexp.MustCompile(`"namespace":"(shards-\d)"`)
	for shard, p := range procs {
		seen := map[string]bool{}
		for _, line := range strings.Split(p.Logs(), "\n") {
			if !strings.Contains(line, "Correcting template in place") {
				continue
			}
			if m := namespace.FindStringSubmatch(line); m != nil {
				seen[m[1]] = true
			}
		}
		var want []string
		for ns, s := range shardOf {
			if s == shard {
				want = append(want, ns)
			}
		}
		var got []string
		for ns := range seen {
			got = append(got, ns)
		}
		g.Expect(got).To(ConsistOf(want), "%s corrected exactly its own releases; log:\n%s", shard, tail(p.Logs(), 40))
	}

	leases := &coordinationv1.LeaseList{}
	g.Expect(env.Client.List(ctx, leases, client.InNamespace(runtimeNS))).To(Succeed())
	var names []string
	for _, l := range leases.Items {
		g.Expect(l.Spec.HolderIdentity).NotTo(BeNil(), "Lease %s has a leader", l.Name)
		names = append(names, l.Name)
	}
	g.Expect(names).To(ConsistOf(leaderElectionID(shardKey+" in (shard1)"), leaderElectionID(shardKey+" in (shard2)")))
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
