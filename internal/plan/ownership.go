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
