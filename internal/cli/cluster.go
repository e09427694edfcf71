package cli

import (
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	runtimeclient "github.com/fluxcd/pkg/runtime/client"
	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clusterFlags are how diff and preview reach the cluster: kubectl's
// kubeconfig flags (--kubeconfig, --context, -n, --as, --token, --server,
// ...) and the client's rate, the controller's --kube-api-qps and
// --kube-api-burst with its defaults. A fleet's passes share one client,
// and client-go's own default (5 requests a second) made `preview -A` wait
// on it (docs/benchmarks.md).
type clusterFlags struct {
	kube   *genericclioptions.ConfigFlags
	client runtimeclient.Options
}

func newClusterFlags() *clusterFlags {
	return &clusterFlags{kube: genericclioptions.NewConfigFlags(true)}
}

// bind registers the flags on fs, the root command's persistent flags, so
// that they may come before or after the command.
func (f *clusterFlags) bind(fs *flag.FlagSet) {
	f.kube.AddFlags(fs)
	f.client.BindFlags(fs)
}

// restConfig is the kubeconfig's REST config with the flags over it, at
// the flags' rate.
func (f *clusterFlags) restConfig() (*rest.Config, error) {
	cfg, err := f.kube.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("failed to load kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = f.client.QPS, f.client.Burst
	return cfg, nil
}

// namespace is -n's namespace, else the kubeconfig context's.
func (f *clusterFlags) namespace() (string, error) {
	ns, _, err := f.kube.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("failed to read the kubeconfig namespace: %w", err)
	}
	return ns, nil
}

// connect returns the REST config and a client that reads HelmReleases
// and the core kinds.
func (f *clusterFlags) connect() (*rest.Config, client.Client, error) {
	cfg, err := f.restConfig()
	if err != nil {
		return nil, nil, err
	}
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = helmv2.AddToScheme(s)
	_ = kustomizev1.AddToScheme(s)
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, nil, fmt.Errorf("failed to create client: %w", err)
	}
	return cfg, c, nil
}

// completeHelmReleases completes the HELMRELEASE argument with the names
// of the namespace's HelmReleases.
func (f *clusterFlags) completeHelmReleases(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	_, c, err := f.connect()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	ns, err := f.namespace()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	list := &helmv2.HelmReleaseList{}
	if err := c.List(cmd.Context(), list, client.InNamespace(ns)); err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	names := make([]cobra.Completion, 0, len(list.Items))
	for _, hr := range list.Items {
		names = append(names, hr.Name)
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
