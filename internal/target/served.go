package target

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// DefaultUnservedRecheck is how long ServedKinds believes a cluster does not
// serve a kind when nothing tells it of new CustomResourceDefinitions: the
// remote clusters of spec.kubeConfig, and the local one when the controller
// may not watch CustomResourceDefinitions. A provider installed later is
// then used within this interval, at the cost of one discovery per missing
// kind per interval for the whole controller, not one per pass.
const DefaultUnservedRecheck = 5 * time.Minute

// ServedKinds is a REST mapper that remembers which kinds the cluster does
// not serve. controller-runtime's dynamic mapper answers a kind it does not
// know by fetching discovery again, on every call: a pass lists every kind
// that may use a template (MachinePools, RKE2ControlPlanes,
// Metal3DataClaims, ...), and a cluster without one of them would pay a
// full discovery, and its decoding, per missing kind and per pass, for
// ever. ServedKinds asks once, and then answers "not served" from memory
// until Reset (a CustomResourceDefinition of the group changed), or until
// Recheck has passed.
//
// Only a definite "not served" is remembered: a discovery that failed for
// another reason (a 500, a timeout) is returned as it is and asked again
// next time.
type ServedKinds struct {
	// Recheck is how long "not served" is believed; 0 believes it until
	// Reset.
	Recheck time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	newInner func() (apimeta.RESTMapper, error)
	inner    atomic.Pointer[mapperBox]

	mu       sync.Mutex
	unserved map[mappingKey]time.Time
	misses   atomic.Int64
}

// mapperBox lets an interface value sit in an atomic.Pointer.
type mapperBox struct{ apimeta.RESTMapper }

// mappingKey is one question asked of the mapper: a kind, at the versions
// asked for ("" for the preferred one).
type mappingKey struct {
	gk       schema.GroupKind
	versions string
}

var _ apimeta.RESTMapper = &ServedKinds{}

// NewServedKinds wraps the mapper newInner builds. Reset builds a new one:
// a mapper that has once mapped a kind keeps that mapping after its
// CustomResourceDefinition is deleted, and keeps a group's old versions.
func NewServedKinds(newInner func() (apimeta.RESTMapper, error), recheck time.Duration) (*ServedKinds, error) {
	m := &ServedKinds{Recheck: recheck, newInner: newInner, unserved: map[mappingKey]time.Time{}}
	inner, err := newInner()
	if err != nil {
		return nil, err
	}
	m.inner.Store(&mapperBox{inner})
	return m, nil
}

// Reset forgets every kind believed not served, and what the mapper
// learnt of the groups: the next question of each kind asks discovery
// again, once. The controller calls it when a CustomResourceDefinition of
// a group it reads appears, changes or goes.
func (m *ServedKinds) Reset() error {
	inner, err := m.newInner()
	if err != nil {
		return err
	}
	m.inner.Store(&mapperBox{inner})
	m.mu.Lock()
	clear(m.unserved)
	m.mu.Unlock()
	return nil
}

// MarkUnserved records that the cluster does not serve gk: a list of it
// was answered 404, so its CustomResourceDefinition went after the mapper
// learnt of it.
func (m *ServedKinds) MarkUnserved(gk schema.GroupKind) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unserved[mappingKey{gk: gk}] = m.now()
}

// Unserved returns the kinds believed not served, sorted, for logs and
// tests.
func (m *ServedKinds) Unserved() []schema.GroupKind {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []schema.GroupKind
	for k, at := range m.unserved {
		if m.fresh(at) && !slices.Contains(out, k.gk) {
			out = append(out, k.gk)
		}
	}
	slices.SortFunc(out, func(a, b schema.GroupKind) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// Misses returns how many questions the inner mapper could not answer from
// what it knew: each may have cost a discovery request.
func (m *ServedKinds) Misses() int64 { return m.misses.Load() }

// RESTMapping implements apimeta.RESTMapper.
func (m *ServedKinds) RESTMapping(gk schema.GroupKind, versions ...string) (*apimeta.RESTMapping, error) {
	key := mappingKey{gk: gk, versions: strings.Join(versions, ",")}
	if m.believedUnserved(key) {
		return nil, &apimeta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	mapping, err := m.mapper().RESTMapping(gk, versions...)
	if err != nil {
		m.misses.Add(1)
		m.remember(key, err)
	}
	return mapping, err
}

// RESTMappings implements apimeta.RESTMapper.
func (m *ServedKinds) RESTMappings(gk schema.GroupKind, versions ...string) ([]*apimeta.RESTMapping, error) {
	key := mappingKey{gk: gk, versions: strings.Join(versions, ",")}
	if m.believedUnserved(key) {
		return nil, &apimeta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	mappings, err := m.mapper().RESTMappings(gk, versions...)
	if err != nil {
		m.misses.Add(1)
		m.remember(key, err)
	}
	return mappings, err
}

// KindFor implements apimeta.RESTMapper.
func (m *ServedKinds) KindFor(resource schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return m.mapper().KindFor(resource)
}

// KindsFor implements apimeta.RESTMapper.
func (m *ServedKinds) KindsFor(resource schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return m.mapper().KindsFor(resource)
}

// ResourceFor implements apimeta.RESTMapper.
func (m *ServedKinds) ResourceFor(input schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return m.mapper().ResourceFor(input)
}

// ResourcesFor implements apimeta.RESTMapper.
func (m *ServedKinds) ResourcesFor(input schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return m.mapper().ResourcesFor(input)
}

// ResourceSingularizer implements apimeta.RESTMapper.
func (m *ServedKinds) ResourceSingularizer(resource string) (string, error) {
	return m.mapper().ResourceSingularizer(resource)
}

func (m *ServedKinds) mapper() apimeta.RESTMapper { return m.inner.Load().RESTMapper }

func (m *ServedKinds) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// fresh reports whether a "not served" learnt at is still believed.
func (m *ServedKinds) fresh(at time.Time) bool {
	return m.Recheck <= 0 || m.now().Sub(at) < m.Recheck
}

// believedUnserved reports whether key, or its kind at any version, is
// remembered as not served (MarkUnserved records the kind alone).
func (m *ServedKinds) believedUnserved(key mappingKey) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range []mappingKey{key, {gk: key.gk}} {
		at, ok := m.unserved[k]
		if !ok {
			continue
		}
		if m.fresh(at) {
			return true
		}
		delete(m.unserved, k)
	}
	return false
}

// remember records key as not served when err says so for certain.
func (m *ServedKinds) remember(key mappingKey, err error) {
	if !IsUnserved(err) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unserved[key] = m.now()
}

// IsUnserved reports whether err says for certain that the cluster does not
// serve a kind: a mapper's "no match", or a discovery whose every failed
// group version was 404. A discovery that failed otherwise (a 500, a
// timeout) says nothing of the kind.
func IsUnserved(err error) bool {
	if err == nil || !apimeta.IsNoMatchError(err) {
		return false
	}
	var failed *apiutil.ErrResourceDiscoveryFailed
	if errors.As(err, &failed) {
		for _, e := range *failed {
			if !apierrors.IsNotFound(e) && !apimeta.IsNoMatchError(e) {
				return false
			}
		}
	}
	return true
}
