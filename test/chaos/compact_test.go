package chaos

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/test/harness"
)

func TestRelists(t *testing.T) {
	since := time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
	req := func(verb, uri, name string, at time.Duration) timedRequest {
		c := harness.Call{Verb: verb, RequestURI: uri}
		c.ObjectRef.Name = name
		return timedRequest{Call: c, At: since.Add(at)}
	}
	cases := []struct {
		name string
		reqs []timedRequest
		want int
	}{
		{name: "a reflector's paged list after the faults began", want: 1,
			reqs: []timedRequest{req("list", "/apis/infrastructure.cluster.x-k8s.io/v1beta1/metal3machinetemplates?limit=500&resourceVersion=0", "", time.Second)}},
		{name: "a streaming list", want: 1,
			reqs: []timedRequest{req("watch", "/apis/cluster.x-k8s.io/v1beta2/machinedeployments?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true", "", time.Second)}},
		{name: "the lists before the faults (the informers' first) are not relists",
			reqs: []timedRequest{req("list", "/apis/infrastructure.cluster.x-k8s.io/v1beta1/metal3machinetemplates?limit=500&resourceVersion=0", "", -time.Second)}},
		{name: "a resumed watch is not a relist",
			reqs: []timedRequest{req("watch", "/apis/infrastructure.cluster.x-k8s.io/v1beta1/metal3machinetemplates?allowWatchBookmarks=true&resourceVersion=812&watch=true", "", time.Second)}},
		{name: "a pass's own list (Helm's storage: no limit) is not a relist",
			reqs: []timedRequest{req("list", "/api/v1/namespaces/fleet-0001/secrets?labelSelector=owner%3Dhelm", "", time.Second)}},
		{name: "a read of one object is not a relist",
			reqs: []timedRequest{req("get", "/apis/cluster.x-k8s.io/v1beta2/namespaces/fleet-0001/clusters/mgmt", "mgmt", time.Second)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(Relists(tc.reqs, since)).To(Equal(tc.want))
		})
	}
}
