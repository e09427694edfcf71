package chart_test

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	. "github.com/onsi/gomega"
)

// shutdownFlag is the controller flag that bounds its wait for the passes in
// flight on SIGTERM.
const shutdownFlag = "--graceful-shutdown-timeout="

// TestGracePeriodCoversShutdown checks every Deployment the chart and
// config/default install: the Pod's terminationGracePeriodSeconds is at
// least the controller's --graceful-shutdown-timeout (the last one in its
// arguments, as the flag parser keeps the last), so that the kubelet does
// not kill the controller while it still waits for its passes. The flag is
// always given, so the check does not rest on the binary's default.
func TestGracePeriodCoversShutdown(t *testing.T) {
	shards, err := readValuesString("sharding:\n  shards: [a]\ngracefulShutdownTimeout: 2m\nterminationGracePeriodSeconds: 130")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]*unstructured.Unstructured{
		"defaults":       renderObjects(t, readValues(t, "")),
		"extended":       renderObjects(t, readValues(t, "values-extended.yaml")),
		"sharded":        renderObjects(t, shards),
		"config/default": buildKustomize(t, "config/default"),
	}
	for name, objs := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			deps := ofKind(objs, "Deployment")
			g.Expect(deps).NotTo(BeEmpty())
			for _, u := range deps {
				var d appsv1.Deployment
				g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d)).To(Succeed())
				spec := d.Spec.Template.Spec
				g.Expect(spec.TerminationGracePeriodSeconds).NotTo(BeNil(), "%s: terminationGracePeriodSeconds is unset (Kubernetes' default is 30 s)", objectKey(u))
				timeout := ""
				for _, a := range spec.Containers[0].Args {
					if v, ok := strings.CutPrefix(a, shutdownFlag); ok {
						timeout = v
					}
				}
				g.Expect(timeout).NotTo(BeEmpty(), "%s: no %s in the arguments", objectKey(u), shutdownFlag)
				want, err := time.ParseDuration(timeout)
				g.Expect(err).NotTo(HaveOccurred())
				grace := time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second
				g.Expect(grace).To(BeNumerically(">=", want), "%s: terminationGracePeriodSeconds below %s%s", objectKey(u), shutdownFlag, timeout)
			}
		})
	}
}

// renderObjects renders the chart with vals and decodes its objects.
func renderObjects(t testing.TB, vals map[string]any) []*unstructured.Unstructured {
	t.Helper()
	files, err := renderChart(t, vals)
	if err != nil {
		t.Fatalf("failed to render chart: %v", err)
	}
	objs, err := decodeObjects([]byte(manifest(files)))
	if err != nil {
		t.Fatalf("failed to decode chart render: %v", err)
	}
	return objs
}
