package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/preview"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// previewChanges ends the demo with the question asked before every change:
// will it roll machines, will the upgrade fail? It installs the e2e suite's
// cluster chart as helm-controller leaves an install, then previews two
// changes of its values, as `templatedrift preview --set` does:
// the image server's IP, which changes Metal3DataTemplates that CAPM3 locks
// under their names (the upgrade would fail), and the workers' kubelet
// arguments, which rename their KubeadmConfigTemplate (the MachineDeployment
// rolls), after a restore brought the bootstrap image URL back on the
// workers' machine template: the client-side-apply upgrade leaves that
// drift, and the preview says what the add-on then does. The preview's
// writes are dry-runs.
func previewChanges(ctx context.Context, env *testenv.Env) error {
	heading("Before a change merges: will it fail, will it roll machines? (templatedrift preview)")
	// The chart's v1beta1 Metal3 kinds draw deprecation warnings from the
	// server; they are not part of the story.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	const ns = "preview"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	hr, err := testenv.InstallClusterChart(ctx, env, ns, "csa")
	if err != nil {
		return err
	}
	kinds, err := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	if err != nil {
		return err
	}
	fmt.Printf("HelmRelease %s/%s: the e2e suite's cluster chart, installed (objects live, release stored).\n", ns, hr.Name)
	for _, change := range []struct{ set, values string }{
		{"imageServerIP=192.168.100.9", `{"imageServerIP": "192.168.100.9"}`},
		{"kubeletArgs.max-pods=200", `{"kubeletArgs": {"max-pods": "200"}}`},
	} {
		if strings.HasPrefix(change.set, "kubeletArgs") {
			if err := driftWorkers(ctx, env, ns); err != nil {
				return err
			}
		}
		fmt.Printf("\n$ templatedrift preview -n %s --set %s %s\n", ns, change.set, hr.Name)
		proposed := hr.DeepCopy()
		proposed.Spec.Values = &apiextensionsv1.JSON{Raw: []byte(change.values)}
		rep, err := preview.Run(ctx, preview.Request{HelmRelease: proposed, Local: env.Client, Target: env.Client,
			TargetConfig: env.Config, Kinds: kinds, Now: time.Now()})
		if err != nil {
			return err
		}
		var b strings.Builder
		if err := preview.WriteText(&b, []preview.Report{rep}); err != nil {
			return err
		}
		fmt.Fprint(os.Stdout, b.String())
		fmt.Printf("(exit code %d)\n", preview.ExitCode([]preview.Report{rep}, preview.FailOnFailure))
	}
	return nil
}

// driftWorkers sets the bootstrap image URL on the workers'
// Metal3MachineTemplate, as a restore of the pre-pivot objects would.
func driftWorkers(ctx context.Context, env *testenv.Env, ns string) error {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
	l.SetKind("Metal3MachineTemplateList")
	if err := env.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
		return err
	}
	for i := range l.Items {
		m := &l.Items[i]
		if !strings.HasPrefix(m.GetName(), "mgmt-md0-") {
			continue
		}
		const url = "http://10.10.10.17/images/ubuntu.qcow2"
		if err := unstructured.SetNestedField(m.Object, url, "spec", "template", "spec", "image", "url"); err != nil {
			return err
		}
		if err := env.Client.Update(ctx, m); err != nil {
			return fmt.Errorf("failed to drift Metal3MachineTemplate %s: %w", m.GetName(), err)
		}
		fmt.Printf("\nA restore of the pre-pivot objects brings the bootstrap image URL back on Metal3MachineTemplate %s/%s.\n", ns, m.GetName())
	}
	return nil
}
