package scale

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// controller is the process a measurement runs, or its processes with
// shards, and whose requests it counts.
type controller struct {
	// name names its processes and their logs; the table and the JSON
	// label the result with it.
	name string
	// bin is the binary run, as user, whose requests the audit log counts.
	bin, user string
	// flags are its flags besides the loopback metrics and health
	// addresses, and env more environment variables besides KUBECONFIG.
	flags, env []string
	// metricsController is the controller label of its reconciles in
	// controller_runtime_reconcile_total.
	metricsController string
	// shards is how many processes share the fleet; 1 is one, unsharded.
	shards int
}

// BuildController builds cmd/template-drift-controller into root's bin/,
// where the e2e suite's add-on binary lives too (`make e2e-bin` builds the
// same file); Go's build cache makes a rebuild of unchanged code quick. It
// returns the binary's path.
func BuildController(ctx context.Context, root string) (string, error) {
	bin := filepath.Join(root, "bin", "template-drift-controller")
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", bin, "./cmd/template-drift-controller")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("failed to build the controller: %w\n%s", err, out)
	}
	return bin, nil
}

// ControllerFlags are the flags the add-on runs with, besides its
// loopback metrics and health addresses: every namespace, cfg.Resync,
// rollouts allowed (the fleets measure corrections, rotations that roll
// Machines among them, not approvals), then cfg.ControllerArgs.
// Everything else is the binary's default, as a user would run it
// (--concurrent, --kube-api-qps, ...).
func ControllerFlags(cfg Config) []string {
	return append([]string{"--watch-all-namespaces=true", "--resync-interval=" + cfg.Resync.String(), "--log-level=info", "--rollouts=allow"},
		cfg.ControllerArgs...)
}

// process is the add-on as AddonSpec runs it: as ControllerUser, with
// a's flags and environment, over a.Shards processes.
func (a Addon) process() controller {
	return controller{name: TemplateDriftController, bin: a.Bin, user: ControllerUser, flags: a.Flags, env: a.Env,
		metricsController: api.ControllerName, shards: a.Shards}
}

// LockdownUser is the user the add-on runs as under the lockdown: the
// audit log tells its requests from the add-on's own run.
const LockdownUser = "template-drift-controller-lockdown-bench"

// lockdownProcess is the add-on as LockdownSpec runs it: as LockdownUser,
// and impersonating each release's TenantAccount
// (--default-service-account, the chart's defaultServiceAccount).
func (a Addon) lockdownProcess() controller {
	c := a.process()
	c.name, c.user = Lockdown, LockdownUser
	c.flags = append(append([]string(nil), a.Flags...), "--default-service-account="+TenantAccount)
	return c
}

// helmControllerMetricsName is the name controller-runtime gives
// helm-controller's HelmRelease controller (the kind, lower-cased).
const helmControllerMetricsName = "helmrelease"

// HelmControllerFlags are the flags helm-controller runs with, besides
// its loopback metrics and health addresses: every namespace, the same
// concurrency as the add-on's default, its own default dependency requeue,
// no leader election, feature gates at their defaults. They are fixed:
// the comparison holds for helm-controller as its chart runs it.
func HelmControllerFlags() []string {
	return []string{"--watch-all-namespaces=true", "--concurrent=4", "--requeue-dependency=30s",
		"--enable-leader-election=false", "--log-level=info"}
}

// helmControllerProcess is helm-controller as HelmControllerSpec runs it.
func helmControllerProcess(bin string) controller {
	return controller{name: HelmController, bin: bin, user: HelmControllerUser, flags: HelmControllerFlags(),
		env: []string{"RUNTIME_NAMESPACE=flux-system"}, metricsController: helmControllerMetricsName, shards: 1}
}

// LocateHelmController returns helm-controller's binary at the version of
// hack/versions.env, as `make helm-controller-bin` (or `make e2e-bin`)
// builds it under root's bin/, and the folder of source-controller's
// CRDs under bin/crds, whose HelmChart its fleet needs.
func LocateHelmController(root string) (bin, sourceCRDs string, err error) {
	v, err := testenv.Versions(root)
	if err != nil {
		return "", "", err
	}
	bin = filepath.Join(root, "bin", "helm-controller", v["HELM_CONTROLLER_VERSION"], "helm-controller")
	sourceCRDs = filepath.Join(root, "bin", "crds", "source-controller", v["FLUX_SOURCE_CONTROLLER_VERSION"])
	for _, f := range []string{bin, sourceCRDs} {
		if _, err := os.Stat(f); err != nil {
			return "", "", fmt.Errorf("%s is missing: run `make helm-controller-bin`, which builds it: %w", f, err)
		}
	}
	return bin, sourceCRDs, nil
}
