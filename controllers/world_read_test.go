package controllers_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
)

// readCounts records what a cached world's add-on read (see cachedReader).
type readCounts struct {
	// liveReads counts the reads that reached the API server.
	liveReads atomic.Int32
	// cachedKinds records the kinds and versions read from the informers:
	// each is an informer holding every object of the kind.
	cachedKinds sync.Map
	// asAccount records the method and path of every request a reviewed
	// world's targets made (as the impersonated account).
	asAccount struct {
		sync.Mutex
		requests []string
	}
}

// accountRequests returns the requests recorded in asAccount since the
// last call.
func (w *world) accountRequests() []string {
	w.asAccount.Lock()
	defer w.asAccount.Unlock()
	out := w.asAccount.requests
	w.asAccount.requests = nil
	return out
}

func (w *world) get(apiVersion, kind, name string) *unstructured.Unstructured {
	w.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	w.g.Expect(w.tgt.Client.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: name}, u)).To(Succeed(), "get %s %s", kind, name)
	return u
}

func (w *world) list(apiVersion, kind string) []unstructured.Unstructured {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind+"List"))
	w.g.Expect(w.tgt.Client.List(w.ctx, l, client.InNamespace(w.ns))).To(Succeed())
	return l.Items
}

func (w *world) condition() *metav1.Condition {
	hr := &helmv2.HelmRelease{}
	w.g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(w.hr), hr)).To(Succeed())
	return apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition)
}

// events drains the recorded events.
func (w *world) events() []string {
	var out []string
	for {
		select {
		case e := <-w.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// versions snapshots what the add-on wrote in the namespace. The real
// Cluster API and Metal3 managers write these objects too (owner
// references, finalizers, status, the MachineDeployment revision), so a
// template's resourceVersion says nothing about the add-on: for each
// object, the snapshot holds the managedFields entries of the add-on's field
// manager, which every write of the add-on changes. The HelmRelease, which
// only the add-on's reporter writes here, is snapshot by resourceVersion.
func (w *world) versions() map[string]string {
	out := map[string]string{}
	for _, k := range [][2]string{
		{"infrastructure.cluster.x-k8s.io/v1beta1", "Metal3MachineTemplate"},
		{"infrastructure.cluster.x-k8s.io/v1beta1", "Metal3DataTemplate"},
		{"infrastructure.cluster.x-k8s.io/v1beta1", "LockedMachineTemplate"},
		{"cluster.x-k8s.io/v1beta2", "MachineDeployment"},
		{"controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane"},
		{"controlplane.cluster.x-k8s.io/v1beta1", "RKE2ControlPlane"},
		{"bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate"},
	} {
		for _, o := range w.list(k[0], k[1]) {
			var ours []string
			for _, f := range o.GetManagedFields() {
				if f.Manager == api.ControllerName {
					ours = append(ours, fmt.Sprintf("%s@%s:%s", f.Operation, f.Time, f.FieldsV1))
				}
			}
			out[k[1]+"/"+o.GetName()] = strings.Join(ours, ";")
		}
	}
	for _, o := range w.list("helm.toolkit.fluxcd.io/v2", "HelmRelease") {
		out["HelmRelease/"+o.GetName()] = o.GetResourceVersion()
	}
	return out
}

// writtenByAddon reports whether the add-on's field manager ever wrote o.
func writtenByAddon(o *unstructured.Unstructured) bool {
	for _, f := range o.GetManagedFields() {
		if f.Manager == api.ControllerName {
			return true
		}
	}
	return false
}

func str(o *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(o.Object, path...)
	return s
}
