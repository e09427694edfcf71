package chaos

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestDoubleWrites(t *testing.T) {
	patchAt := func(rv, image string) Write {
		return write("patch", "metal3machinetemplates", "ns", "md0",
			`[{"op":"replace","path":"/metadata/resourceVersion","value":"`+rv+`"},{"op":"replace","path":"/spec/template/spec/image/url","value":"`+image+`"}]`)
	}
	refused := func(w Write) Write { w.ResponseStatus.Code = 409; return w }
	status := func(rv, reason string) Write {
		w := write("patch", "helmreleases", "ns", "cluster", `{"metadata":{"resourceVersion":"`+rv+`"},"status":{"conditions":[{"reason":"`+reason+`"}]}}`)
		w.ObjectRef.Subresource = "status"
		return w
	}
	create := write("create", "lockedmachinetemplates", "ns", "cp-0123456789", `{"metadata":{"name":"cp-0123456789","annotations":{"templatedrift.io/replaces":"cp"}},"spec":{"a":1}}`)
	// The same object, its keys in another order.
	createAgain := write("create", "lockedmachinetemplates", "ns", "cp-0123456789", `{"spec":{"a":1},"metadata":{"annotations":{"templatedrift.io/replaces":"cp"},"name":"cp-0123456789"}}`)
	createAgain.ResponseStatus.Code = 201
	tests := []struct {
		name string
		// writes are the audit log's writes, in order.
		writes []Write
		// want are the violations.
		want []string
	}{
		{name: "one correction", writes: []Write{patchAt("5", "http://mgmt"), status("7", "DriftCorrected")}},
		{name: "the same patch at a later resourceVersion, stored twice",
			writes: []Write{patchAt("5", "http://mgmt"), patchAt("9", "http://mgmt")},
			want:   []string{`no-double-write: patch metal3machinetemplates ns/md0: the same change stored 2 times: [{"op":"replace","path":"/spec/template/spec/image/url","value":"http://mgmt"}]`}},
		{name: "the second refused (409): made once", writes: []Write{patchAt("5", "http://mgmt"), refused(patchAt("5", "http://mgmt"))}},
		{name: "two different changes", writes: []Write{patchAt("5", "http://mgmt"), patchAt("6", "http://other")}},
		{name: "a replacement created twice (keys in another order)", writes: []Write{create, createAgain},
			want: []string{`no-double-write: create lockedmachinetemplates ns/cp-0123456789: the same change stored 2 times: {"metadata":{"annotations":{"templatedrift.io/replaces":"cp"},"name":"cp-0123456789"},"spec":{"a":1}}`}},
		{name: "status patches with other conditions", writes: []Write{status("7", "DriftDetected"), status("8", "DriftCorrected")}},
		{name: "the same status twice", writes: []Write{status("7", "DriftCorrected"), status("8", "DriftCorrected"), status("9", "DriftCorrected")},
			want: []string{`no-double-write: patch helmreleases/status ns/cluster: the same change stored 3 times: {"status":{"conditions":[{"reason":"DriftCorrected"}]}}`}},
		{name: "events are exempt", writes: []Write{write("patch", "events", "ns", "e", `{"count":2}`), write("patch", "events", "ns", "e", `{"count":2}`)}},
		{name: "the same patch to two objects", writes: []Write{patchAt("5", "http://mgmt"),
			write("patch", "metal3machinetemplates", "ns", "cp", `[{"op":"replace","path":"/spec/template/spec/image/url","value":"http://mgmt"}]`)}},
		{name: "a body that is not JSON is compared as it is", writes: []Write{write("delete", "x", "ns", "a", `not json`), write("delete", "x", "ns", "a", `not json`)},
			want: []string{"no-double-write: delete x ns/a: the same change stored 2 times: not json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := violationStrings(DoubleWrites(tt.writes))
			g.Expect(got).To(Equal(tt.want))
		})
	}
	g := NewWithT(t)
	g.Expect(abbreviate("abcdef", 3)).To(Equal("abc..."))
}
