package main

import (
	"fmt"

	"github.com/fluxcd/pkg/runtime/acl"
	helper "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/features"
	flag "github.com/spf13/pflag"
)

// Flux users set --feature-gates and --no-cross-namespace-refs on the Flux
// controllers, often with one kustomize patch for several Deployments. The
// add-on binds both with Flux's own option sets, as helm-controller does, so
// that such a patch does not stop it at start. Neither has an effect here:
// the add-on has no feature of its own to gate, and it follows no
// cross-namespace reference. It reads the stored release from the
// HelmRelease's storage namespace, where helm-controller wrote it (a
// namespace helm-controller's flag does not restrict either), and
// spec.kubeConfig.secretRef, which is always in the HelmRelease's
// namespace; it reads no chart source, dependsOn or valuesFrom.

// helmControllerFeatureGates returns the feature gates helm-controller
// v1.6.4 supports (its internal/features and fluxcd/pkg/auth's), with their
// defaults. --feature-gates accepts exactly these, so a gate copied from
// helm-controller's arguments is accepted and a misspelt one is refused, as
// every Flux controller refuses a gate it does not know.
func helmControllerFeatureGates() map[string]bool {
	return map[string]bool{
		helper.FeatureGateCacheSecretsAndConfigMaps:  false,
		helper.FeatureGateAdditiveCELDependencyCheck: false,
		helper.FeatureGateExternalArtifact:           false,
		helper.FeatureGateDisableConfigWatchers:      false,
		helper.FeatureGateDirectSourceFetch:          false,
		"DetectDrift":                                false,
		"CorrectDrift":                               false,
		"AllowDNSLookups":                            false,
		"OOMWatch":                                   false,
		"AdoptLegacyReleases":                        false,
		"DisableChartDigestTracking":                 false,
		"UseHelm3Defaults":                           false,
		"CancelHealthCheckOnNewRevision":             false,
		"DefaultToRetryOnFailure":                    false,
		"ObjectLevelWorkloadIdentity":                false,
	}
}

// compatOptions are the Flux flags the add-on accepts for compatibility.
type compatOptions struct {
	featureGates features.FeatureGates
	acl          acl.Options
	// gatesArg is --feature-gates as given, for the start-up log.
	gatesArg string
}

// BindFlags binds --feature-gates and --no-cross-namespace-refs.
func (o *compatOptions) BindFlags(fs *flag.FlagSet) {
	o.featureGates.BindFlags(fs)
	o.acl.BindFlags(fs)
}

// load checks the gates --feature-gates named against
// helmControllerFeatureGates; called once, after the flags are parsed.
func (o *compatOptions) load(fs *flag.FlagSet) error {
	gates := helmControllerFeatureGates()
	if err := o.featureGates.SupportedFeatures(gates); err != nil {
		return fmt.Errorf("failed to load feature gates: %w", err)
	}
	if fs.Changed("feature-gates") {
		o.gatesArg = fs.Lookup("feature-gates").Value.String()
	}
	return nil
}

// notices are the start-up log lines that say the compatibility flags given
// have no effect.
func (o *compatOptions) notices() []string {
	var out []string
	if o.gatesArg != "" {
		out = append(out, fmt.Sprintf("--feature-gates=%s has no effect: the add-on has no feature gates of its own and accepts helm-controller's for compatibility", o.gatesArg))
	}
	if o.acl.NoCrossNamespaceRefs {
		out = append(out, "--no-cross-namespace-refs has no effect: the add-on follows no cross-namespace reference")
	}
	return out
}
