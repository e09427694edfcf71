package scale

import (
	"context"
	"os"
	"strconv"
	"time"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/harness"
)

// controlPlane is a spec's kube-apiserver and etcd: their audit log, their
// pids (whose CPU the window samples), the controller user's kubeconfig,
// and how long they took to start.
type controlPlane struct {
	env                   *testenv.Env
	auditLog              string
	apiServerPID, etcdPID int
	kubeconfig            string
	startSeconds          float64
}

// controlPlaneInput is what a spec's control plane differs by.
type controlPlaneInput struct {
	// policy is the audit policy: harness.MetadataPolicy, or
	// writesPolicy when the write floor replays the writes' bodies.
	policy string
	// crdDirs are more CRD folders (source-controller's, for
	// helm-controller's HelmCharts).
	crdDirs []string
	// user is the controller's user, and groups its groups:
	// system:masters, or none under the lockdown.
	user   string
	groups []string
}

// startControlPlane starts kube-apiserver and etcd with the audit log on
// and the kinds of a management cluster of the fleet's shape (the Cluster
// API and Metal3 providers' CRDs less the fleet's omitted kinds, without
// their managers and so without webhooks, and in.crdDirs), and adds the
// controller's user. The session stops them when the spec ends, and then
// removes the audit log of a successful run unless it is to be kept.
func startControlPlane(s *session, in controlPlaneInput) (*controlPlane, error) {
	flags, auditLog, err := harness.AuditFlags(s.run.Dir, in.policy)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	env, err := testenv.StartWith("bench-"+strconv.Itoa(s.run.N)+"-"+s.run.Fleet.Name+"-"+s.controller,
		testenv.Options{ProviderCRDs: true, APIServerFlags: flags, ExtraCRDDirs: in.crdDirs, OmitKinds: s.run.Fleet.Omit})
	if err != nil {
		return nil, err
	}
	cp := &controlPlane{env: env, auditLog: auditLog, startSeconds: time.Since(start).Seconds()}
	s.deferCleanup(func(ok bool) {
		if err := env.Stop(); err != nil {
			s.logf("%v", err)
		}
		if ok && !s.run.KeepAudit {
			_ = os.Remove(auditLog)
		}
	})
	if cp.kubeconfig, err = env.AddUser(in.user, in.groups); err != nil {
		return nil, err
	}
	if cp.apiServerPID, err = harness.ChildRunning(env.Paths.APIServer); err != nil {
		return nil, err
	}
	if cp.etcdPID, err = harness.ChildRunning(env.Paths.Etcd); err != nil {
		return nil, err
	}
	return cp, nil
}

// masters is the group of the controller's user outside the lockdown.
var masters = []string{"system:masters"}

// sampleIdle measures the API server's own CPU use with the fleet in
// place and no controller, in milliseconds a second: the floor under the
// per-reconcile figure.
func sampleIdle(ctx context.Context, cp *controlPlane) (float64, error) {
	before, err := harness.CPUTime(cp.apiServerPID)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := harness.Sleep(ctx, idleSample); err != nil {
		return 0, err
	}
	after, err := harness.CPUTime(cp.apiServerPID)
	if err != nil {
		return 0, err
	}
	return float64(after-before) / float64(time.Millisecond) / time.Since(start).Seconds(), nil
}
