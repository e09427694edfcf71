package diff

import (
	"testing"

	. "github.com/onsi/gomega"
)

// m3dtSpec is a Metal3DataTemplate spec with one IPv4 network whose route
// carries the given extra fields (CAPM3's e2e templates set prefix: 0).
func m3dtSpec(route m) m {
	r := m{"gateway": m{"string": "192.168.0.1"}, "network": "0.0.0.0"}
	for k, v := range route {
		r[k] = v
	}
	return m{"clusterName": "c", "networkData": m{"networks": m{"ipv4": l{
		m{"id": "baremetal", "ipAddressFromIPPool": "pool", "link": "enp1s0", "routes": l{r}},
	}}}}
}

func TestConfirm(t *testing.T) {
	const routePrefix = "/spec/networkData/networks/ipv4/0/routes/0/prefix"
	cases := []struct {
		name     string // what the case proves
		desired  m      // manifest object
		live     m      // live object, as the server returns it
		previous m      // previous release's object, for removals; nil for none
		view     m      // the server's answer to a dry-run of the manifest's object
		wantKept []string
		wantMade []string
	}{{
		name:     "a duration re-encoded by conversion is the server's",
		desired:  spec(m{"timeout": "5m"}),
		live:     spec(m{"timeout": "5m0s"}),
		view:     spec(m{"timeout": "5m0s"}),
		wantMade: []string{"/spec/timeout"},
	}, {
		name:     "an empty string the server drops is the server's",
		desired:  spec(m{"a": "x", "providerID": ""}),
		live:     spec(m{"a": "x"}),
		view:     spec(m{"a": "x"}),
		wantMade: []string{"/spec/providerID"},
	}, {
		name:     "an empty list the server drops is the server's",
		desired:  spec(m{"a": "x", "taints": l{}}),
		live:     spec(m{"a": "x"}),
		view:     spec(m{"a": "x"}),
		wantMade: []string{"/spec/taints"},
	}, {
		name:     "CAPM3 drops prefix: 0 inside a list element: the server's",
		desired:  spec(m3dtSpec(m{"prefix": int64(0)})),
		live:     spec(m3dtSpec(nil)),
		view:     spec(m3dtSpec(nil)),
		wantMade: []string{routePrefix},
	}, {
		name:     "a real change is kept, next to a server-made one",
		desired:  spec(m{"timeout": "5m", "url": "http://10.0.0.2/img"}),
		live:     spec(m{"timeout": "5m0s", "url": "http://10.0.0.1/img"}),
		view:     spec(m{"timeout": "5m0s", "url": "http://10.0.0.2/img"}),
		wantKept: []string{"/spec/url"},
		wantMade: []string{"/spec/timeout"},
	}, {
		name:     "a real change the server normalises is still kept",
		desired:  spec(m{"timeout": "10m"}),
		live:     spec(m{"timeout": "5m0s"}),
		view:     spec(m{"timeout": "10m0s"}),
		wantKept: []string{"/spec/timeout"},
	}, {
		name:     "absent from both the answer and live: equal",
		desired:  spec(m{"a": m{"b": ""}}),
		live:     spec(m{}),
		view:     spec(m{}),
		wantMade: []string{"/spec/a"},
	}, {
		name:     "absent live but kept by the server: drift",
		desired:  spec(m{"a": "x"}),
		live:     spec(m{}),
		view:     spec(m{"a": "x"}),
		wantKept: []string{"/spec/a"},
	}, {
		name:     "a removal the server would make is kept",
		desired:  spec(m{"a": "x"}),
		live:     spec(m{"a": "x", "old": "y"}),
		previous: spec(m{"a": "x", "old": "y"}),
		view:     spec(m{"a": "x"}),
		wantKept: []string{"/spec/old"},
	}, {
		name:     "a removal of a field the server defaults back to its live value is the server's",
		desired:  spec(m{"a": "x"}),
		live:     spec(m{"a": "x", "nodeReuse": false}),
		previous: spec(m{"a": "x", "nodeReuse": false}),
		view:     spec(m{"a": "x", "nodeReuse": false}),
		wantMade: []string{"/spec/nodeReuse"},
	}, {
		name:     "numbers compare by value, and the answer's other fields and metadata do not matter",
		desired:  m{"metadata": m{"name": "t"}, "spec": m{"n": "1", "keep": "x"}},
		live:     m{"metadata": m{"name": "t", "resourceVersion": "7"}, "spec": m{"n": 1.0, "keep": "x"}},
		view:     m{"metadata": m{"name": "t-tdc-probe", "uid": "u"}, "spec": m{"n": int64(1), "keep": "x", "defaulted": true}},
		wantMade: []string{"/spec/n"},
	}, {
		name:     "a whole list replaced: compared whole",
		desired:  spec(m{"l": l{m{"n": "a", "e": ""}, m{"n": "b"}}}),
		live:     spec(m{"l": l{m{"n": "a"}}}),
		view:     spec(m{"l": l{m{"n": "a"}, m{"n": "b"}}}),
		wantKept: []string{"/spec/l"},
	}, {
		name:     "escaped keys resolve",
		desired:  spec(m{"a/b": m{"~c": ""}}),
		live:     spec(m{"a/b": m{}}),
		view:     spec(m{"a/b": m{}}),
		wantMade: []string{"/spec/a~1b/~0c"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			changes := Object(obj(tc.desired), obj(tc.live), Options{Previous: obj(tc.previous)})
			g.Expect(changes).NotTo(BeEmpty(), "the fixture must have raw changes")

			kept, made := Confirm(changes, obj(tc.view), obj(tc.live))
			g.Expect(paths(kept)).To(Equal(tc.wantKept))
			g.Expect(paths(made)).To(Equal(tc.wantMade))
		})
	}
}

func TestConfirmWithoutAnswerOrOutsideSpec(t *testing.T) {
	g := NewWithT(t)
	live := obj(m{"metadata": m{"labels": m{"a": "1"}}, "spec": m{"a": "x"}})
	changes := []Change{
		{Path: "/metadata/labels/a", Op: OpReplace, Before: "1", After: "1"},
		{Path: "/spec/a", Op: OpReplace, Before: "x", After: "x"},
		{Path: "not-a-pointer", Op: OpReplace},
	}

	kept, made := Confirm(changes, nil, live)
	g.Expect(kept).To(Equal(changes), "no answer: nothing can be confirmed")
	g.Expect(made).To(BeEmpty())

	kept, made = Confirm(changes, live, live)
	g.Expect(paths(kept)).To(Equal([]string{"/metadata/labels/a", "not-a-pointer"}), "metadata and malformed paths are never the server's")
	g.Expect(paths(made)).To(Equal([]string{"/spec/a"}))
}

// paths lists the changes' paths, nil for none.
func paths(changes []Change) []string {
	var out []string
	for _, ch := range changes {
		out = append(out, ch.Path)
	}
	return out
}
