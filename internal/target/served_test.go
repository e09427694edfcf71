package target_test

import (
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/templatedrift/template-drift-controller/internal/target"
)

var (
	machinePool = schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "MachinePool"}
	machineDep  = schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "MachineDeployment"}
)

// countingMapper stands for controller-runtime's dynamic mapper: it serves
// the kinds in served, and counts every question, each of which may cost
// it a discovery request when the answer is a miss.
type countingMapper struct {
	apimeta.RESTMapper
	served map[schema.GroupKind]bool
	err    error
	asked  int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*apimeta.RESTMapping, error) {
	c.asked++
	if c.err != nil {
		return nil, c.err
	}
	if !c.served[gk] {
		return nil, &apimeta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return &apimeta.RESTMapping{GroupVersionKind: gk.WithVersion("v1beta2")}, nil
}

func (c *countingMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*apimeta.RESTMapping, error) {
	m, err := c.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	return []*apimeta.RESTMapping{m}, nil
}

// TestServedKinds: a kind the cluster does not serve is asked of the inner
// mapper once, and then answered from memory until Reset or the recheck
// interval; a served kind is always the inner mapper's answer; a discovery
// that failed for another reason is never remembered.
func TestServedKinds(t *testing.T) {
	g := NewWithT(t)
	inner := &countingMapper{served: map[schema.GroupKind]bool{machineDep: true}}
	built := 0
	now := time.Unix(0, 0)
	m, err := target.NewServedKinds(func() (apimeta.RESTMapper, error) { built++; return inner, nil }, time.Minute)
	g.Expect(err).NotTo(HaveOccurred())
	m.Now = func() time.Time { return now }

	for range 100 {
		_, err := m.RESTMapping(machinePool)
		g.Expect(apimeta.IsNoMatchError(err)).To(BeTrue(), "not served, every time")
	}
	g.Expect(inner.asked).To(Equal(1), "one question for a hundred passes")
	g.Expect(m.Misses()).To(BeEquivalentTo(1))
	g.Expect(m.Unserved()).To(Equal([]schema.GroupKind{machinePool}))

	for range 3 {
		mapping, err := m.RESTMapping(machineDep)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(mapping.GroupVersionKind.Version).To(Equal("v1beta2"))
	}
	g.Expect(inner.asked).To(Equal(4), "a served kind is the inner mapper's (cached) answer")

	_, err = m.RESTMappings(machinePool, "v1beta1")
	g.Expect(apimeta.IsNoMatchError(err)).To(BeTrue())
	g.Expect(inner.asked).To(Equal(4), "a kind not served at all is not served at any version")

	t.Log("the provider is installed: after the recheck interval the kind is asked again")
	inner.served[machinePool] = true
	now = now.Add(time.Minute)
	_, err = m.RESTMapping(machinePool)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Unserved()).To(BeEmpty())

	t.Log("its CRD is deleted: a 404 on its list marks it, and it is not asked again")
	m.MarkUnserved(machinePool)
	asked := inner.asked
	_, err = m.RESTMapping(machinePool, "v1beta2")
	g.Expect(apimeta.IsNoMatchError(err)).To(BeTrue())
	g.Expect(inner.asked).To(Equal(asked))

	t.Log("Reset builds a new inner mapper and forgets every kind not served")
	g.Expect(m.Reset()).To(Succeed())
	g.Expect(built).To(Equal(2))
	_, err = m.RESTMapping(machinePool)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(inner.asked).To(Equal(asked + 1))

	t.Log("a discovery that failed otherwise is not remembered")
	inner.err = errors.New("the server is currently unable to handle the request")
	for range 3 {
		_, err = m.RESTMapping(schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "Other"})
		g.Expect(err).To(HaveOccurred())
		g.Expect(apimeta.IsNoMatchError(err)).To(BeFalse())
	}
	g.Expect(inner.asked).To(Equal(asked + 4))
}

// TestServedKindsWithoutRecheck: with the CRD watch, "not served" is
// believed until Reset, however long.
func TestServedKindsWithoutRecheck(t *testing.T) {
	g := NewWithT(t)
	inner := &countingMapper{served: map[schema.GroupKind]bool{}}
	now := time.Unix(0, 0)
	m, err := target.NewServedKinds(func() (apimeta.RESTMapper, error) { return inner, nil }, 0)
	g.Expect(err).NotTo(HaveOccurred())
	m.Now = func() time.Time { return now }
	_, _ = m.RESTMapping(machinePool)
	now = now.Add(24 * time.Hour)
	_, _ = m.RESTMapping(machinePool)
	g.Expect(inner.asked).To(Equal(1))
}

// TestIsUnserved: only a certain "not served" is remembered.
func TestIsUnserved(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "cluster.x-k8s.io"}, "")
	gv := schema.GroupVersion{Group: "cluster.x-k8s.io", Version: "v1beta2"}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil},
		{name: "no kind match", err: &apimeta.NoKindMatchError{GroupKind: machinePool}, want: true},
		{name: "no resource match", err: &apimeta.NoResourceMatchError{}, want: true},
		{name: "discovery: every group version 404", err: &apiutil.ErrResourceDiscoveryFailed{gv: notFound}, want: true},
		{name: "discovery: one group version 503", err: &apiutil.ErrResourceDiscoveryFailed{gv: notFound,
			{Group: "cluster.x-k8s.io", Version: "v1beta1"}: apierrors.NewServiceUnavailable("busy")}},
		{name: "another error", err: errors.New("connection refused")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(target.IsUnserved(tc.err)).To(Equal(tc.want))
		})
	}
}
