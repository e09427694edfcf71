package target

import (
	"context"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// TestReviewsOutliveTargets: with more accounts than the clients Targets
// keeps, a client built again for an account finds its access reviews, and
// dropping a local client forgets none of its releases.
func TestReviewsOutliveTargets(t *testing.T) {
	g := NewWithT(t)
	var evicted []string
	targets := &Targets{Local: &rest.Config{Host: "https://127.0.0.1:1"}, MaxTargets: 1, ReviewTTL: DefaultReviewTTL,
		Cached: &CachedReader{}, Evicted: func(key string) { evicted = append(evicted, key) }}
	hr := func(ns string) *helmv2.HelmRelease {
		return &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: ns},
			Spec: helmv2.HelmReleaseSpec{ServiceAccountName: "tenant"}}
	}
	first, err := targets.For(context.Background(), hr("a"))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = targets.For(context.Background(), hr("b"))
	g.Expect(err).NotTo(HaveOccurred())
	again, err := targets.For(context.Background(), hr("a"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).NotTo(BeIdenticalTo(first), "a new client: the bound dropped the first")
	g.Expect(again.Reader.(*ReviewedReader).Reviews).To(BeIdenticalTo(first.Reader.(*ReviewedReader).Reviews))
	g.Expect(again.Reader.(*ReviewedReader).User).To(Equal("system:serviceaccount:a:tenant"))
	g.Expect(evicted).To(BeEmpty())
}
