package controllers_test

import (
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
)

// expectUntouched runs a pass and checks it wrote nothing to the target and
// left every template as it was.
func expectUntouched(w *world) {
	w.t.Helper()
	before := w.versions()
	delete(before, "HelmRelease/cluster")
	w.g.Expect(w.reconcile()).To(Equal(0))
	after := w.versions()
	delete(after, "HelmRelease/cluster")
	w.g.Expect(after).To(Equal(before))
}

// TestWarnMode reports the drift, and what auto would do, and writes nothing.
func TestWarnMode(t *testing.T) {
	w := newWorld(t, scenario{annotations: map[string]string{api.ModeAnnotation: api.ModeWarn}, live: bootstrap, release: mgmt})
	expectUntouched(w)
	cond := w.condition()
	w.g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	w.g.Expect(cond.Reason).To(Equal(api.DriftDetectedReason))
	w.g.Expect(cond.Message).To(ContainSubstring("Metal3MachineTemplate/mgmt-md0: would in-place, rolls machines: no [/spec/template/spec/image/checksum"))
	w.g.Expect(cond.Message).To(ContainSubstring("/spec/template/spec/image/url"))
	w.g.Expect(w.events()).To(ConsistOf(HavePrefix("Warning " + api.TemplateDriftDetectedEvent)))
	expectUntouched(w)
	w.g.Expect(w.events()).To(BeEmpty(), "same drift, no repeat event")
}

// TestIgnoreRules: the HelmRelease's own driftDetection.ignore rules apply
// whatever its mode, and a template can opt out by annotation or label.
func TestIgnoreRules(t *testing.T) {
	imagePaths := []string{"/spec/template/spec/image/url", "/spec/template/spec/image/checksum"}
	cases := []struct {
		name       string
		hrMutate   func(*helmv2.HelmRelease)
		liveMutate func(*unstructured.Unstructured)
	}{
		{name: "rule without target", hrMutate: func(hr *helmv2.HelmRelease) {
			hr.Spec.DriftDetection = &helmv2.DriftDetection{Ignore: []helmv2.IgnoreRule{{Paths: imagePaths}}}
		}},
		{name: "rule targeting the kind", hrMutate: func(hr *helmv2.HelmRelease) {
			hr.Spec.DriftDetection = &helmv2.DriftDetection{Mode: helmv2.DriftDetectionDisabled, Ignore: []helmv2.IgnoreRule{{
				Paths: imagePaths, Target: &kustomize.Selector{Kind: "Metal3MachineTemplate"}}}}
		}},
		{name: "templatedrift.io/ignore annotation", liveMutate: func(o *unstructured.Unstructured) {
			o.SetAnnotations(merge(o.GetAnnotations(), map[string]string{api.IgnoreAnnotation: "true"}))
		}},
		{name: "Flux driftDetection disabled label", liveMutate: func(o *unstructured.Unstructured) {
			o.SetLabels(merge(o.GetLabels(), map[string]string{api.FluxDriftDetectionKey: "disabled"}))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, hrMutate: tc.hrMutate, liveMutate: tc.liveMutate})
			expectUntouched(w)
			w.g.Expect(w.condition().Status).To(Equal(metav1.ConditionTrue))
		})
	}
}

// TestNoWrites covers the objects and states the add-on must leave alone.
func TestNoWrites(t *testing.T) {
	cases := []struct {
		name       string
		hrMutate   func(*helmv2.HelmRelease)
		liveMutate func(*unstructured.Unstructured)
		reason     string // expected condition reason; "" for no condition
		message    string // expected message fragment
	}{
		{name: "suspended", hrMutate: func(hr *helmv2.HelmRelease) { hr.Spec.Suspend = true }},
		{name: "paused by spec", liveMutate: func(o *unstructured.Unstructured) {
			if o.GetKind() == "Cluster" {
				_ = unstructured.SetNestedField(o.Object, true, "spec", "paused")
			}
		}, reason: api.ClusterPausedReason, message: "/mgmt is paused"},
		{name: "paused by annotation", liveMutate: func(o *unstructured.Unstructured) {
			if o.GetKind() == "Cluster" {
				o.SetAnnotations(merge(o.GetAnnotations(), map[string]string{api.ClusterPausedAnnotation: ""}))
			}
		}, reason: api.ClusterPausedReason},
		{name: "owned by another release", liveMutate: func(o *unstructured.Unstructured) {
			o.SetAnnotations(merge(o.GetAnnotations(), map[string]string{api.HelmReleaseNameAnnotation: "other"}))
		}, reason: api.OwnershipConflictReason, message: "Metal3MachineTemplate/mgmt-md0: owned by release "},
		{name: "without Helm's ownership annotations", liveMutate: func(o *unstructured.Unstructured) {
			ann := o.GetAnnotations()
			delete(ann, api.HelmReleaseNameAnnotation)
			delete(ann, api.HelmReleaseNamespaceAnnotation)
			o.SetAnnotations(ann)
		}, reason: api.NoDriftDetectedReason, message: "Metal3MachineTemplate/mgmt-md0 (not owned by release"},
		{name: "topology owned", liveMutate: func(o *unstructured.Unstructured) {
			o.SetLabels(merge(o.GetLabels(), map[string]string{api.TopologyOwnedLabel: ""}))
		}, reason: api.NoDriftDetectedReason, message: "owned by a ClusterClass topology"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt, hrMutate: tc.hrMutate, liveMutate: tc.liveMutate})
			expectUntouched(w)
			cond := w.condition()
			if tc.reason == "" {
				w.g.Expect(cond).To(BeNil())
				return
			}
			w.g.Expect(cond.Reason).To(Equal(tc.reason))
			w.g.Expect(cond.Message).To(ContainSubstring(tc.message))
		})
	}
}

// TestConfiguration: an invalid annotation is reported and nothing is
// written; turning the add-on off removes its condition.
func TestConfiguration(t *testing.T) {
	w := newWorld(t, scenario{annotations: map[string]string{api.ModeAnnotation: "yes-please"}, live: bootstrap, release: mgmt})
	expectUntouched(w)
	cond := w.condition()
	w.g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	w.g.Expect(cond.Reason).To(Equal(api.InvalidConfigurationReason))
	w.g.Expect(cond.Message).To(ContainSubstring(`templatedrift.io/mode="yes-please"`))
	w.g.Expect(w.events()).To(ConsistOf(HavePrefix("Warning " + api.TemplateInvalidConfigurationEvent)))

	w.setAnnotations(map[string]string{api.ModeAnnotation: api.ModeEnabled, api.StrategyAnnotation: "sideways"})
	expectUntouched(w)
	w.g.Expect(w.condition().Message).To(ContainSubstring(`templatedrift.io/strategy="sideways"`))

	w.setAnnotations(map[string]string{api.ModeAnnotation: api.ModeDisabled})
	expectUntouched(w)
	w.g.Expect(w.condition()).To(BeNil(), "disabled removes our condition")
	hr := &helmv2.HelmRelease{}
	w.g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(w.hr), hr)).To(Succeed())
}

func (w *world) setAnnotations(a map[string]string) {
	hr := &helmv2.HelmRelease{}
	w.g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(w.hr), hr)).To(Succeed())
	hr.SetAnnotations(a)
	w.g.Expect(env.Client.Update(w.ctx, hr)).To(Succeed())
}
