package plan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/templatedrift/template-drift-controller/api"
)

// SkipReason says why a template is not the add-on's to touch, or "": it
// opted out (ours or Flux's drift-detection opt-out, on the manifest or the
// live object), a ClusterClass topology owns it, or the live object is not
// the release's by Helm's ownership annotations (Ownership).
func SkipReason(m, live *unstructured.Unstructured, releaseName, releaseNamespace string) string {
	skip, conflict := Ownership(m, live, releaseName, releaseNamespace)
	if conflict != "" {
		return conflict
	}
	return skip
}

// Ownership sorts out why an object of the manifest is not the add-on's to
// touch. skip is a reason to leave it alone quietly: it opted out, a
// ClusterClass topology owns it, or the live object carries no Helm
// ownership annotations (objects Helm created before it wrote them).
// conflict is set instead when the live object's annotations name another
// Helm release: the manifest claims an object of that release, which Helm
// itself refuses to take over ("invalid ownership metadata"), so the pass
// says so rather than report the release in sync. Both are "" when the
// object is the release's.
func Ownership(m, live *unstructured.Unstructured, releaseName, releaseNamespace string) (skip, conflict string) {
	for _, o := range []*unstructured.Unstructured{m, live} {
		if o == nil {
			continue
		}
		if o.GetLabels()[api.FluxDriftDetectionKey] == "disabled" || o.GetAnnotations()[api.FluxDriftDetectionKey] == "disabled" ||
			o.GetAnnotations()[api.IgnoreAnnotation] == "true" || o.GetLabels()[api.IgnoreAnnotation] == "true" {
			return "opted out", ""
		}
	}
	if live == nil {
		return "", ""
	}
	if _, ok := live.GetLabels()[api.TopologyOwnedLabel]; ok {
		return "owned by a ClusterClass topology", ""
	}
	if owner, ok := OwnedByAnother(live, releaseName, releaseNamespace); ok {
		return "", "owned by release " + owner
	}
	ann := live.GetAnnotations()
	if ann[api.HelmReleaseNameAnnotation] != releaseName || ann[api.HelmReleaseNamespaceAnnotation] != releaseNamespace {
		return fmt.Sprintf("not owned by release %s/%s", releaseNamespace, releaseName), ""
	}
	return "", ""
}

// OwnedByAnother reports whether live's Helm ownership annotations name a
// release other than releaseNamespace/releaseName, and names it
// ("<ns>/<name>"; a missing half reads as "?"). An object with neither
// annotation is no other release's.
func OwnedByAnother(live *unstructured.Unstructured, releaseName, releaseNamespace string) (string, bool) {
	ann := live.GetAnnotations()
	name, ns := ann[api.HelmReleaseNameAnnotation], ann[api.HelmReleaseNamespaceAnnotation]
	if (name == "" && ns == "") || (name == releaseName && ns == releaseNamespace) {
		return "", false
	}
	if name == "" {
		name = "?"
	}
	if ns == "" {
		ns = "?"
	}
	return ns + "/" + name, true
}

// PausedClusters names the live Clusters that are paused, by spec.paused or
// by the cluster.x-k8s.io/paused annotation.
func PausedClusters(live []*unstructured.Unstructured) []string {
	var out []string
	for _, cl := range live {
		if isPaused(cl) {
			out = append(out, cl.GetNamespace()+"/"+cl.GetName())
		}
	}
	return out
}

func isPaused(cluster *unstructured.Unstructured) bool {
	if _, ok := cluster.GetAnnotations()[api.ClusterPausedAnnotation]; ok {
		return true
	}
	paused, _, _ := unstructured.NestedBool(cluster.Object, "spec", "paused")
	return paused
}

// UnavailableClusters compares the Clusters the release renders with the
// live ones read for them (GetAll leaves out those that do not exist) and
// names ("<ns>/<name>") the rendered ones missing live and the live ones
// being deleted.
func UnavailableClusters(rendered, live []*unstructured.Unstructured) (missing, deleting []string) {
	found := map[string]bool{}
	for _, cl := range live {
		name := cl.GetNamespace() + "/" + cl.GetName()
		found[name] = true
		if cl.GetDeletionTimestamp() != nil {
			deleting = append(deleting, name)
		}
	}
	for _, cl := range rendered {
		if name := cl.GetNamespace() + "/" + cl.GetName(); !found[name] {
			missing = append(missing, name)
		}
	}
	return missing, deleting
}

// PausedObjects names ("<Kind> <ns>/<name>") the live objects that carry the
// cluster.x-k8s.io/paused annotation, whatever its value, as Cluster API's
// annotations.HasPaused reads it. Nil entries (objects missing live) are
// skipped.
func PausedObjects(live []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range live {
		if o == nil {
			continue
		}
		if _, ok := o.GetAnnotations()[api.ClusterPausedAnnotation]; ok {
			out = append(out, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
		}
	}
	return out
}
