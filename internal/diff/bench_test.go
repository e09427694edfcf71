package diff

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// benchTemplate is a fuller Metal3MachineTemplate: host selector expressions,
// secret references and, live, the server-defaulted fields.
func benchTemplate(i int, imageHost string, manifest bool) *unstructured.Unstructured {
	u := metal3Template(fmt.Sprintf("pool-%02d", i), imageHost, manifest)
	tmpl := u.Object["spec"].(m)["template"].(m)["spec"].(m)
	tmpl["hostSelector"].(m)["matchExpressions"] = l{
		m{"key": "rack", "operator": "In", "values": l{"r1", "r2", "r3"}},
		m{"key": "gpu", "operator": "NotIn", "values": l{"none"}},
	}
	tmpl["userData"] = m{"name": fmt.Sprintf("pool-%02d-user-data", i), "namespace": "capi"}
	tmpl["metaData"] = m{"name": fmt.Sprintf("pool-%02d-meta-data", i), "namespace": "capi"}
	tmpl["networkData"] = m{"name": fmt.Sprintf("pool-%02d-network-data", i), "namespace": "capi"}
	if !manifest {
		md := u.Object["metadata"].(m)
		md["labels"] = m{"app.kubernetes.io/managed-by": "Helm"}
		md["managedFields"] = l{m{"manager": "helm-controller", "operation": "Apply"}}
	}
	return u
}

// BenchmarkObject compares a release of 50 templates against live objects in
// which every fifth template's image URL and checksum drifted, with a previous
// release and an ignore rule, as the controller runs it; one op is one release.
func BenchmarkObject(b *testing.B) {
	const templates = 50
	desired := make([]*unstructured.Unstructured, templates)
	live := make([]*unstructured.Unstructured, templates)
	for i := range templates {
		desired[i] = benchTemplate(i, "192.168.100.2", true)
		host := "192.168.100.2"
		if i%5 == 0 {
			host = "10.10.10.17"
		}
		live[i] = benchTemplate(i, host, false)
	}
	ignore := []string{"/spec/template/spec/hostSelector/matchExpressions/1"}
	b.ReportAllocs()
	b.ResetTimer()
	drifted := 0
	for range b.N {
		drifted = 0
		for i := range templates {
			// The previous release rendered the same template.
			drifted += len(Object(desired[i], live[i], Options{Previous: desired[i], IgnorePaths: ignore}))
		}
	}
	if drifted != 2*templates/5 {
		b.Fatalf("drifted fields = %d", drifted)
	}
}
