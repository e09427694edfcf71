package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// managersStartTimeout bounds starting every manager and seeing its
// webhooks serve, on a loaded 2-core machine.
const managersStartTimeout = 3 * time.Minute

// managerArgs are the flags every Cluster API and Metal3 manager gets: no
// leader election, no metrics endpoint, health on loopback, webhooks with
// the test certificate. No flag binds the webhook server to one address;
// the managers hack/build-capi.sh builds read it from TDC_WEBHOOK_HOST
// (managerEnv).
func managerArgs(kubeconfig, certDir, webhookAddr, healthAddr string) []string {
	_, port, _ := net.SplitHostPort(webhookAddr)
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--webhook-port=" + port,
		"--webhook-cert-dir=" + certDir,
		"--health-addr=" + healthAddr,
		"--diagnostics-address=0",
		"--insecure-diagnostics",
		"--v=2",
	}
}

// managerEnv binds each manager's webhook server to loopback only.
var managerEnv = []string{"TDC_WEBHOOK_HOST=127.0.0.1"}

// startManagers runs the real Cluster API and Metal3 managers against e,
// then wires their webhooks as a cluster would: each multi-version CRD
// converts through its manager, and each manager's mutating and validating
// webhook configurations are installed. It returns once every provider's
// webhook refuses its probe.
func (e *Env) startManagers(ctx context.Context, provs []provider, crdsOf map[string][]string) error {
	ctx, cancel := context.WithTimeout(ctx, managersStartTimeout)
	defer cancel()
	certs, err := newWebhookCerts(filepath.Join(e.dir, "webhook-certs"))
	if err != nil {
		return err
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	ports := map[string]string{}
	for _, p := range provs {
		if !p.hasWebhooks() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var webhookAddr string
			proc, err := StartReady(p.Name, p.Manager, 2, 1, func(addrs []string) []string {
				webhookAddr = addrs[0]
				return append(managerArgs(e.KubeConfigPath, certs.Dir, addrs[0], addrs[1]), p.Args...)
			}, managerEnv, filepath.Join(e.dir, "logs"))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("failed to start the %s manager: %w", p.Name, err))
				return
			}
			e.managers = append(e.managers, proc)
			_, ports[p.Name], _ = net.SplitHostPort(webhookAddr)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	e.webhookPorts = ports
	for _, p := range provs {
		if p.hasWebhooks() {
			if err := e.wireWebhooks(ctx, p, crdsOf[p.Name], ports[p.Name], certs.CAPEM); err != nil {
				return err
			}
		}
	}
	for _, p := range provs {
		if p.hasWebhooks() {
			if err := waitWebhooksServe(ctx, e.Client, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// wireWebhooks points p's CRDs at its manager's conversion endpoint and
// installs its admission webhook configurations.
func (e *Env) wireWebhooks(ctx context.Context, p provider, crds []string, port string, caPEM []byte) error {
	if err := useConversionWebhook(ctx, e.Client, crds, port, caPEM); err != nil {
		return err
	}
	objs, err := webhookConfigurations(p, port, caPEM)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := e.Client.Create(ctx, o); err != nil {
			return fmt.Errorf("failed to install webhook configuration %s: %w", o.GetName(), err)
		}
	}
	return nil
}

// stopManagers stops the managers before the API server goes, so they do
// not spend their last seconds logging connection errors.
func (e *Env) stopManagers() {
	var wg sync.WaitGroup
	for _, p := range e.managers {
		wg.Add(1)
		go func() { defer wg.Done(); p.Stop() }()
	}
	wg.Wait()
	e.managers = nil
}

// WebhookPorts returns each manager's webhook port by provider name.
func (e *Env) WebhookPorts() map[string]string {
	return e.webhookPorts
}

// ManagerLogs returns the output of the manager of provider name so far,
// for a failing test to print.
func (e *Env) ManagerLogs(name string) string {
	for _, p := range e.managers {
		if p.Name == name {
			return p.Logs()
		}
	}
	return ""
}

// providerCRDs loads the CRDs of each provider, labelled as clusterctl
// would install them, and returns them with their names by provider.
func providerCRDs(provs []provider) ([]*apiextensionsv1.CustomResourceDefinition, map[string][]string, error) {
	var all []*apiextensionsv1.CustomResourceDefinition
	names := map[string][]string{}
	for _, p := range provs {
		crds, err := readCRDDir(filepath.Join(p.Dir, "crds"))
		if err != nil {
			return nil, nil, err
		}
		for _, crd := range crds {
			labelProvider(crd, p.Name)
			names[p.Name] = append(names[p.Name], crd.Name)
		}
		all = append(all, crds...)
	}
	return all, names, nil
}
