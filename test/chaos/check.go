package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/test/harness"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

// liveKinds are every kind of the fixture chart's templates and consumers,
// at the versions the chart renders.
var liveKinds = []schema.GroupVersionKind{
	m3mtGVK, kcpGVK,
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "LockedMachineTemplate"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3DataTemplate"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmConfigTemplate"},
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineDeployment"},
}

// auditFlush is how long the last requests are given to reach the audit
// log.
const auditFlush = 2 * time.Second

// checks are what a scenario adds to every scenario's checks.
type checks struct {
	// lease puts the controller's Lease in its write scope.
	lease bool
	// statusOf are releases besides the fleet's whose status the
	// controller may write, by namespace/name.
	statusOf []string
	// doubleWrite checks that no change was stored twice.
	doubleWrite bool
}

// check checks the live state and the audit log against every scenario's
// invariants (and the managers', with them), records the requests, and
// returns the controller's writes for the scenario's own checks.
func (w *world) check(ctx context.Context, c checks) ([]Write, error) {
	w.res.Checked = append([]string{}, Invariants...)
	var objs []unstructured.Unstructured
	for _, gvk := range liveKinds {
		l, err := listAll(ctx, w.env.Client, gvk)
		if err != nil {
			return nil, err
		}
		objs = append(objs, l...)
	}
	for _, v := range CheckLive(objs, w.fleet) {
		w.res.violate(v.Invariant, v.What)
	}
	if err := w.checkOwnExits(); err != nil {
		return nil, err
	}
	end := time.Now()
	if err := harness.Sleep(ctx, auditFlush); err != nil {
		return nil, err
	}
	writes, err := ReadWrites(w.auditLog, ControllerUser)
	if err != nil {
		return nil, err
	}
	scope := NewScope(w.fleet.Objects, releaseName).WithStatusOf(c.statusOf...)
	if c.lease {
		scope = scope.WithLease(runtimeNamespace, leaseName)
	}
	for _, v := range CheckWrites(writes, scope) {
		w.res.violate(v.Invariant, v.What)
	}
	counts, err := scale.CountRequests(w.auditLog, ControllerUser, scale.Window{Start: w.started.Add(-time.Second), End: end})
	if err != nil {
		return nil, err
	}
	w.res.Requests, w.res.Writes = counts[0].Total, counts[0].Writes()
	if w.managed != nil {
		if err := w.managed.check(ctx, w, writes); err != nil {
			return nil, err
		}
	}
	if w.proxy != nil {
		pc := w.proxy.Counts()
		w.res.Proxy = &pc
	}
	if c.doubleWrite {
		w.res.Checked = append(w.res.Checked, InvNoDoubleWrite)
		for _, v := range DoubleWrites(writes) {
			w.res.violate(v.Invariant, v.What)
		}
	}
	return writes, nil
}

// checkOwnExits fails converged for every exit of a controller process on
// its own, from the logs of every process of the run.
func (w *world) checkOwnExits() error {
	logs, err := filepath.Glob(filepath.Join(w.in.Dir, "*.log"))
	if err != nil {
		return err
	}
	for _, path := range logs {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, e := range OwnExits(string(b)) {
			w.res.violate(InvConverged, fmt.Sprintf("the controller exited on its own (%s): %s", filepath.Base(path), e))
		}
	}
	return nil
}
