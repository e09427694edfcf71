package scale

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// Target is one controller the benchmark measures, run as a process on
// each fleet's control plane.
type Target struct {
	// Name is TemplateDriftController or HelmController; the table and the
	// JSON label each result with it.
	Name string
	// Bin is the binary run.
	Bin string
	// User is the user it runs as, whose requests the audit log counts.
	User string
	// Flags are its flags besides the loopback metrics and health
	// addresses, and Env more environment variables besides KUBECONFIG.
	Flags []string
	Env   []string
	// MetricsController is the controller label of its reconciles in
	// controller_runtime_reconcile_total.
	MetricsController string
	// CRDDirs are more CRD folders its control plane needs (source-controller's
	// HelmChart for helm-controller).
	CRDDirs []string
	// Lockdown runs the add-on under the multi-tenancy lockdown: its user
	// has the chart's lockdown role and no group, and every release's
	// namespace has the tenant account it impersonates.
	Lockdown bool
	// Shards is how many processes of it share the fleet (Config.Shards);
	// 1 or 0 is one, unsharded.
	Shards int
}

// IsHelmController reports whether t is helm-controller: its fleet has
// HelmCharts and warn mode, it converges on Ready, and it does not heal.
func (t Target) IsHelmController() bool { return t.Name == HelmController }

// AddonTarget is the add-on's binary bin, run with ControllerFlags.
func AddonTarget(cfg Config, bin string) Target {
	return Target{Name: TemplateDriftController, Bin: bin, User: ControllerUser, Flags: ControllerFlags(cfg),
		Env: cfg.ControllerEnv, MetricsController: api.ControllerName, Shards: cfg.Shards}
}

// LockdownUser is the user the add-on runs as under the lockdown.
const LockdownUser = "template-drift-controller-lockdown-bench"

// LockdownTarget is the add-on's binary bin under the lockdown:
// ControllerFlags and --default-service-account.
func LockdownTarget(cfg Config, bin string) Target {
	t := AddonTarget(cfg, bin)
	t.Name, t.User, t.Lockdown = Lockdown, LockdownUser, true
	t.Flags = append(t.Flags, "--default-service-account="+TenantAccount)
	return t
}

// helmControllerMetricsName is the name controller-runtime gives
// helm-controller's HelmRelease controller (the kind, lower-cased).
const helmControllerMetricsName = "helmrelease"

// HelmControllerFlags are the flags helm-controller runs with, besides
// its loopback metrics and health addresses: every namespace, the same
// concurrency as the add-on's default, its own default dependency requeue,
// no leader election, feature gates at their defaults, then
// cfg.HelmControllerArgs.
func HelmControllerFlags(cfg Config) []string {
	return append([]string{"--watch-all-namespaces=true", "--concurrent=4", "--requeue-dependency=30s",
		"--enable-leader-election=false", "--log-level=info"}, cfg.HelmControllerArgs...)
}

// HelmControllerTarget is helm-controller at the version of
// hack/versions.env, as `make helm-controller-bin` (or `make e2e-bin`)
// builds it under root's bin/, with source-controller's CRDs from bin/crds.
func HelmControllerTarget(cfg Config, root string) (Target, error) {
	v, err := testenv.Versions(root)
	if err != nil {
		return Target{}, err
	}
	bin := filepath.Join(root, "bin", "helm-controller", v["HELM_CONTROLLER_VERSION"], "helm-controller")
	crds := filepath.Join(root, "bin", "crds", "source-controller", v["FLUX_SOURCE_CONTROLLER_VERSION"])
	for _, f := range []string{bin, crds} {
		if _, err := os.Stat(f); err != nil {
			return Target{}, fmt.Errorf("%s is missing: run `make helm-controller-bin`, which builds it: %w", f, err)
		}
	}
	return Target{Name: HelmController, Bin: bin, User: HelmControllerUser, Flags: HelmControllerFlags(cfg),
		Env: []string{"RUNTIME_NAMESPACE=flux-system"}, MetricsController: helmControllerMetricsName, CRDDirs: []string{crds}}, nil
}
