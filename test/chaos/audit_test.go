package chaos

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// write builds a write of verb to resource ns/name with body.
func write(verb, resource, ns, name, body string) Write {
	var w Write
	w.Verb, w.ObjectRef.Resource, w.ObjectRef.Namespace, w.ObjectRef.Name = verb, resource, ns, name
	w.RequestObject = json.RawMessage(body)
	w.ResponseStatus.Code = 200
	return w
}

func TestPrecondition(t *testing.T) {
	tests := []struct {
		name string
		// w is the write checked.
		w Write
		// want is a substring of what is missing, or empty for a precondition held.
		want string
	}{
		{name: "JSON patch with a resourceVersion test", w: write("patch", "metal3machinetemplates", "ns", "a",
			`[{"op":"test","path":"/metadata/resourceVersion","value":"12"},{"op":"replace","path":"/spec/x","value":1}]`)},
		{name: "JSON patch setting the resourceVersion read (the add-on's)", w: write("patch", "metal3machinetemplates", "ns", "a",
			`[{"op":"replace","path":"/metadata/resourceVersion","value":"410"},{"op":"replace","path":"/spec/x","value":1}]`)},
		{name: "JSON patch without", w: write("patch", "metal3machinetemplates", "ns", "a",
			`[{"op":"replace","path":"/spec/x","value":1}]`), want: "a patch that neither"},
		{name: "JSON patch removing the resourceVersion", w: write("patch", "metal3machinetemplates", "ns", "a",
			`[{"op":"remove","path":"/metadata/resourceVersion"}]`), want: "a patch that neither"},
		{name: "JSON patch testing an empty resourceVersion", w: write("patch", "metal3machinetemplates", "ns", "a",
			`[{"op":"test","path":"/metadata/resourceVersion","value":""}]`), want: "a patch that neither"},
		{name: "merge patch with an optimistic lock", w: write("patch", "helmreleases", "ns", "cluster",
			`{"metadata":{"resourceVersion":"9"},"status":{}}`)},
		{name: "merge patch without", w: write("patch", "helmreleases", "ns", "cluster", `{"status":{}}`), want: "a patch that neither"},
		{name: "update with a resourceVersion", w: write("update", "kubeadmcontrolplanes", "ns", "a", `{"metadata":{"resourceVersion":"3"}}`)},
		{name: "update without", w: write("update", "kubeadmcontrolplanes", "ns", "a", `{"metadata":{}}`), want: "an update without"},
		{name: "delete with both preconditions", w: write("delete", "lockedmachinetemplates", "ns", "a",
			`{"kind":"DeleteOptions","preconditions":{"uid":"u","resourceVersion":"4"}}`)},
		{name: "delete with the UID only", w: write("delete", "lockedmachinetemplates", "ns", "a",
			`{"preconditions":{"uid":"u"}}`), want: "a delete without"},
		{name: "delete without a body", w: write("delete", "lockedmachinetemplates", "ns", "a", ``), want: "a delete without"},
		{name: "patch cut off before its body was read (the controller killed)", w: func() Write {
			w := write("patch", "kubeadmcontrolplanes", "ns", "a", ``)
			w.ResponseStatus.Code = 500
			return w
		}()},
		{name: "patch stored with no body logged", w: write("patch", "kubeadmcontrolplanes", "ns", "a", ``), want: "a patch that neither"},
		{name: "refused patch without a precondition", w: func() Write {
			w := write("patch", "kubeadmcontrolplanes", "ns", "a", `[{"op":"replace","path":"/spec/x","value":1}]`)
			w.ResponseStatus.Code = 422
			return w
		}(), want: "a patch that neither"},
		{name: "create", w: write("create", "lockedmachinetemplates", "ns", "a", `{}`)},
		{name: "deletecollection", w: write("deletecollection", "lockedmachinetemplates", "ns", "", ``), want: "no precondition can guard"},
		{name: "event patch is exempt", w: write("patch", "events", "ns", "e", `{"count":2}`)},
		{name: "an access review stores nothing", w: write("create", "selfsubjectaccessreviews", "", "", `{}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := Precondition(tt.w)
			if tt.want == "" {
				g.Expect(got).To(BeEmpty())
			} else {
				g.Expect(got).To(ContainSubstring(tt.want))
			}
		})
	}
}

func TestOutOfScope(t *testing.T) {
	s := NewScope([]ObjectKey{{"fleet-0000", "LockedMachineTemplate", "mgmt-cp"}, {"fleet-0000", "KubeadmControlPlane", "mgmt-cp"}}, "cluster")
	status := write("patch", "helmreleases", "fleet-0000", "cluster", `{}`)
	status.ObjectRef.Subresource = "status"
	spec := write("patch", "helmreleases", "fleet-0000", "cluster", `{}`)
	otherStatus := write("patch", "helmreleases", "other", "cluster", `{}`)
	otherStatus.ObjectRef.Subresource = "status"
	withLease := s.WithLease("flux-system", "template-drift-controller-leader-election")
	tests := []struct {
		name string
		// scope is the scope checked against, s when nil.
		scope *Scope
		// w is the write checked.
		w Write
		// want is a substring of why it is out of scope, or empty.
		want string
	}{
		{name: "a template of the manifest", w: write("patch", "lockedmachinetemplates", "fleet-0000", "mgmt-cp", `[]`)},
		{name: "a consumer of the manifest", w: write("patch", "kubeadmcontrolplanes", "fleet-0000", "mgmt-cp", `[]`)},
		{name: "a replacement created with its annotation", w: write("create", "lockedmachinetemplates", "fleet-0000", "mgmt-cp-0123456789",
			`{"metadata":{"annotations":{"templatedrift.io/replaces":"mgmt-cp"}}}`)},
		{name: "a replacement created without", w: write("create", "lockedmachinetemplates", "fleet-0000", "mgmt-cp-0123456789", `{}`),
			want: "without templatedrift.io/replaces"},
		{name: "a replacement deleted", w: write("delete", "lockedmachinetemplates", "fleet-0000", "mgmt-cp-0123456789", `{}`)},
		{name: "the same name in another kind", w: write("patch", "metal3machinetemplates", "fleet-0000", "mgmt-cp", `[]`), want: "not a template"},
		{name: "another namespace", w: write("patch", "lockedmachinetemplates", "kube-system", "mgmt-cp", `[]`), want: "not a template"},
		{name: "a Secret", w: write("update", "secrets", "fleet-0000", "sh.helm.release.v1.cluster.v1", `{}`), want: "not a template"},
		{name: "the HelmRelease status", w: status},
		{name: "the HelmRelease spec", w: spec, want: "other than its status"},
		{name: "a HelmRelease outside the fleet", w: otherStatus, want: "not in the fleet"},
		{name: "an event", w: write("create", "events", "fleet-0000", "cluster.1", `{}`)},
		{name: "the move block on a Cluster", w: write("patch", "clusters", "fleet-0000", "mgmt",
			`[{"op":"replace","path":"/metadata/resourceVersion","value":"7"},{"op":"add","path":"/metadata/annotations/clusterctl.cluster.x-k8s.io~1block-move","value":"template-drift-controller"}]`)},
		{name: "the move block as the first annotation", w: write("patch", "clusters", "fleet-0000", "mgmt",
			`[{"op":"replace","path":"/metadata/resourceVersion","value":"7"},{"op":"add","path":"/metadata/annotations","value":{"clusterctl.cluster.x-k8s.io/block-move":"template-drift-controller"}}]`)},
		{name: "the move block lifted", w: write("patch", "clusters", "fleet-0000", "mgmt",
			`[{"op":"replace","path":"/metadata/resourceVersion","value":"8"},{"op":"remove","path":"/metadata/annotations/clusterctl.cluster.x-k8s.io~1block-move"}]`)},
		{name: "a Cluster's spec", w: write("patch", "clusters", "fleet-0000", "mgmt",
			`[{"op":"replace","path":"/metadata/resourceVersion","value":"7"},{"op":"replace","path":"/spec/paused","value":false}]`), want: "other than a patch of clusterctl's block-move"},
		{name: "annotations beside the move block", w: write("patch", "clusters", "fleet-0000", "mgmt",
			`[{"op":"add","path":"/metadata/annotations","value":{"clusterctl.cluster.x-k8s.io/block-move":"x","other":"y"}}]`), want: "other than a patch of clusterctl's block-move"},
		{name: "a Cluster outside the fleet", w: write("patch", "clusters", "kube-system", "mgmt",
			`[{"op":"add","path":"/metadata/annotations/clusterctl.cluster.x-k8s.io~1block-move","value":"template-drift-controller"}]`), want: "in the fleet"},
		{name: "a Cluster deleted", w: write("delete", "clusters", "fleet-0000", "mgmt", `{}`), want: "other than a patch"},
		{name: "an access review", w: write("create", "selfsubjectaccessreviews", "", "", `{}`)},
		{name: "a Lease without leader election", w: write("update", "leases", "flux-system", "template-drift-controller-leader-election", `{}`), want: "not a template"},
		{name: "the Lease with leader election", scope: &withLease, w: write("update", "leases", "flux-system", "template-drift-controller-leader-election", `{}`)},
		{name: "another Lease", scope: &withLease, w: write("update", "leases", "flux-system", "other", `{}`), want: "not a template"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s := s
			if tt.scope != nil {
				s = *tt.scope
			}
			got := s.OutOfScope(tt.w)
			if tt.want == "" {
				g.Expect(got).To(BeEmpty())
			} else {
				g.Expect(got).To(ContainSubstring(tt.want))
			}
		})
	}
}

func TestReadWritesAndCheck(t *testing.T) {
	g := NewWithT(t)
	lines := []string{
		// the controller's patch, stored
		`{"stage":"ResponseComplete","verb":"patch","requestURI":"/apis/x/v1beta1/namespaces/ns/lockedmachinetemplates/a","user":{"username":"` + ControllerUser + `"},"objectRef":{"resource":"lockedmachinetemplates","namespace":"ns","name":"a"},"requestObject":[{"op":"test","path":"/metadata/resourceVersion","value":"1"}],"responseStatus":{"code":200}}`,
		// a dry-run: not a write
		`{"stage":"ResponseComplete","verb":"create","requestURI":"/apis/x/v1beta1/namespaces/ns/lockedmachinetemplates?dryRun=All","user":{"username":"` + ControllerUser + `"},"objectRef":{"resource":"lockedmachinetemplates","namespace":"ns","name":"a-tdc-probe"},"responseStatus":{"code":201}}`,
		// another user's write
		`{"stage":"ResponseComplete","verb":"update","requestURI":"/x","user":{"username":"admin"},"objectRef":{"resource":"secrets","namespace":"ns","name":"s"},"responseStatus":{"code":200}}`,
		// a read
		`{"stage":"ResponseComplete","verb":"get","requestURI":"/x","user":{"username":"` + ControllerUser + `"},"objectRef":{"resource":"secrets","namespace":"ns","name":"s"},"responseStatus":{"code":200}}`,
		// the controller's refused update, without a resourceVersion, out of scope
		`{"stage":"ResponseComplete","verb":"update","requestURI":"/x","user":{"username":"` + ControllerUser + `"},"objectRef":{"resource":"secrets","namespace":"ns","name":"s"},"requestObject":{"metadata":{}},"responseStatus":{"code":409}}`,
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	g.Expect(os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)).To(Succeed())
	writes, err := ReadWrites(path, ControllerUser)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(writes).To(HaveLen(2))
	g.Expect(writes[0].Succeeded()).To(BeTrue())
	g.Expect(writes[1].Succeeded()).To(BeFalse())

	s := NewScope([]ObjectKey{{"ns", "LockedMachineTemplate", "a"}}, "cluster")
	got := violationStrings(CheckWrites(writes, s))
	g.Expect(got).To(Equal([]string{
		"preconditions: update secrets ns/s (HTTP 409): an update without metadata.resourceVersion",
		"scope: update secrets ns/s (HTTP 409): not a template or consumer of an opted-in release, nor a replacement of one",
	}))
	g.Expect(StoredWritesTo(writes, map[string]bool{"ns/lockedmachinetemplates/a": true, "ns/secrets/s": true})).
		To(Equal(map[string]int{"ns/lockedmachinetemplates/a": 1}))

	_, err = ReadWrites(filepath.Join(t.TempDir(), "none"), ControllerUser)
	g.Expect(err).To(HaveOccurred())
}

// TestReadRequests: every request of the controller, as itself or
// impersonating, once each; a watch still open (only ResponseStarted) is
// there, and one that ended is there once.
func TestReadRequests(t *testing.T) {
	g := NewWithT(t)
	me := `"user":{"username":"` + ControllerUser + `"}`
	lines := []string{
		`{"auditID":"1","stage":"ResponseStarted","verb":"watch",` + me + `,"objectRef":{"resource":"secrets"},"responseStatus":{"code":200}}`,
		`{"auditID":"2","stage":"ResponseStarted","verb":"watch",` + me + `,"objectRef":{"resource":"kubeadmcontrolplanes"},"responseStatus":{"code":200}}`,
		`{"auditID":"3","stage":"ResponseComplete","verb":"get",` + me + `,"impersonatedUser":{"username":"system:serviceaccount:ns:tenant"},"objectRef":{"resource":"secrets","namespace":"ns","name":"s"},"responseStatus":{"code":200}}`,
		`{"auditID":"2","stage":"ResponseComplete","verb":"watch",` + me + `,"objectRef":{"resource":"kubeadmcontrolplanes"},"responseStatus":{"code":200}}`,
		`{"auditID":"4","stage":"ResponseComplete","verb":"get","user":{"username":"admin"},"objectRef":{"resource":"secrets"},"responseStatus":{"code":200}}`,
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	g.Expect(os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)).To(Succeed())
	reqs, err := ReadRequests(path, ControllerUser)
	g.Expect(err).NotTo(HaveOccurred())
	var got []string
	for _, r := range reqs {
		got = append(got, r.Verb+" "+r.ObjectRef.Resource+" as "+r.ImpersonatedUser)
	}
	g.Expect(got).To(Equal([]string{"watch secrets as ", "watch kubeadmcontrolplanes as ", "get secrets as system:serviceaccount:ns:tenant"}))
	// The open Secret watch as itself is what the identity check catches.
	g.Expect(CheckIdentity(reqs, nil).Violations).To(HaveLen(1))
}
