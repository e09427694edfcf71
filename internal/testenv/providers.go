package testenv

import (
	"fmt"
	"os"
	"path/filepath"
)

// provider is one set of CRDs on a managed control plane, with the real
// manager that serves their conversion and admission webhooks, if any.
type provider struct {
	// Name is the clusterctl provider name (the cluster.x-k8s.io/provider
	// label) and the folder under bin/providers.
	Name string
	// Dir is bin/providers/<Name>/<version>: crds/ and webhooks.yaml.
	Dir string
	// Manager is the manager binary; "" for CRD-only providers
	// (BareMetalHost and Metal3 IPAM: no Ironic and no IPAM run here).
	Manager string
	// Args are flags for this manager only.
	Args []string
	// Probe is an object, in YAML, that the provider's validating webhook
	// refuses while the schema accepts it. It is written in a converted
	// version (v1beta1) so that a dry-run create of it also goes through the
	// conversion webhook: once it is refused by the webhook, both work.
	Probe string
}

// hasWebhooks reports whether the provider runs a manager that serves
// webhooks.
func (p provider) hasWebhooks() bool { return p.Manager != "" }

// providers resolves the providers of a managed control plane under bin/,
// failing with ErrNotProvisioned when a manager or manifest is missing
// (`make testbin` builds and fetches them).
func providers(bin string, v map[string]string) ([]provider, error) {
	capi, capm3 := v["CAPI_VERSION"], v["CAPM3_VERSION"]
	// The managers are cached under <version>-<flavor>: hack/build-capi.sh
	// patches them to bind their webhooks to TDC_WEBHOOK_HOST.
	capiBin := filepath.Join(bin, "capi", capi+"-"+v["MANAGERS_FLAVOR"])
	capm3Bin := filepath.Join(bin, "capm3", capm3+"-"+v["MANAGERS_FLAVOR"])
	dir := func(name, version string) string { return filepath.Join(bin, "providers", name, version) }
	out := []provider{
		{Name: "cluster-api", Dir: dir("cluster-api", capi), Manager: filepath.Join(capiBin, "core"), Probe: probeMachineDeployment},
		{Name: "bootstrap-kubeadm", Dir: dir("bootstrap-kubeadm", capi), Manager: filepath.Join(capiBin, "bootstrap-kubeadm"), Probe: probeKubeadmConfigTemplate},
		{Name: "control-plane-kubeadm", Dir: dir("control-plane-kubeadm", capi), Manager: filepath.Join(capiBin, "controlplane-kubeadm"), Probe: probeKubeadmControlPlane},
		{Name: "infrastructure-metal3", Dir: dir("infrastructure-metal3", capm3), Manager: filepath.Join(capm3Bin, "manager"), Probe: probeMetal3MachineTemplate,
			// CAPM3's Metal3DataTemplate controller does not watch Clusters: a
			// template reconciled before CAPM3's cache holds its Cluster is
			// left without finalizer and owner until the next resync (10 min
			// by default) or claim. A shorter resync keeps tests that wait for
			// them short; it is the same code path.
			Args: []string{"--sync-period=30s"}},
		{Name: "baremetal-operator", Dir: dir("baremetal-operator", v["BMO_VERSION"])},
		{Name: "ip-address-manager", Dir: dir("ip-address-manager", v["IPAM_VERSION"])},
	}
	for _, p := range out {
		need := []string{filepath.Join(p.Dir, ".complete")}
		if p.hasWebhooks() {
			need = append(need, p.Manager, filepath.Join(p.Dir, "webhooks.yaml"))
		}
		for _, f := range need {
			if _, err := os.Stat(f); err != nil {
				return nil, fmt.Errorf("%w: %s is missing", ErrNotProvisioned, f)
			}
		}
	}
	return out, nil
}

// The probes: schema-valid objects that each provider's own validating
// webhook refuses, in v1beta1 so that conversion runs first.
const (
	// Cluster API's MachineDeployment webhook refuses a version that is not
	// semver.
	probeMachineDeployment = `apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: tdc-webhook-probe, namespace: default}
spec:
  clusterName: probe
  selector: {matchLabels: {}}
  template:
    spec:
      clusterName: probe
      version: not-a-version
      bootstrap: {dataSecretName: probe}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: probe}
`
	// CABPK refuses the Ignition format while its feature gate is off (the
	// default).
	probeKubeadmConfigTemplate = `apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata: {name: tdc-webhook-probe, namespace: default}
spec:
  template:
    spec: {format: ignition}
`
	// KCP refuses a version that is not semver.
	probeKubeadmControlPlane = `apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata: {name: tdc-webhook-probe, namespace: default}
spec:
  version: not-a-version
  machineTemplate:
    infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: probe}
  kubeadmConfigSpec: {}
`
	// CAPM3 refuses an image without a checksum (unless it is a live ISO).
	probeMetal3MachineTemplate = `apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata: {name: tdc-webhook-probe, namespace: default}
spec:
  template:
    spec:
      image: {url: "http://127.0.0.1/probe.img", checksum: ""}
`
)

// managerBinaries lists the manager binaries of provs, for reapOrphans.
func managerBinaries(provs []provider) []string {
	var out []string
	for _, p := range provs {
		if p.hasWebhooks() {
			out = append(out, p.Manager)
		}
	}
	return out
}
