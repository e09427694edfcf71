package framework

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// AddonReleaseName is the release name the e2e suite installs the add-on's
// chart as: config/flux's HelmRelease's releaseName.
const AddonReleaseName = "template-drift-controller"

// AddonChart is the add-on's chart as installed on a control plane, and
// what it deployed that the suite runs.
type AddonChart struct {
	// Namespace is the release namespace.
	Namespace string
	// Manifest is the rendered manifest Helm stored.
	Manifest string
	// Deployment is the controller Deployment.
	Deployment *appsv1.Deployment
	// Services are the Services.
	Services []corev1.Service
}

// parseAddonManifest finds the one Deployment and the Services in a
// rendered manifest.
func parseAddonManifest(namespace, manifest string) (*AddonChart, error) {
	out := &AddonChart{Namespace: namespace, Manifest: manifest}
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("failed to split the rendered manifest: %w", err)
		}
		var head struct{ Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("failed to parse the rendered manifest: %w", err)
		}
		switch head.Kind {
		case "Deployment":
			if out.Deployment != nil {
				return nil, errors.New("the chart rendered more than one Deployment; run one instance (no sharding.shards)")
			}
			out.Deployment = &appsv1.Deployment{}
			if err := yaml.UnmarshalStrict(doc, out.Deployment); err != nil {
				return nil, fmt.Errorf("failed to parse the rendered Deployment: %w", err)
			}
		case "Service":
			var s corev1.Service
			if err := yaml.UnmarshalStrict(doc, &s); err != nil {
				return nil, fmt.Errorf("failed to parse a rendered Service: %w", err)
			}
			out.Services = append(out.Services, s)
		}
	}
	if out.Deployment == nil {
		return nil, errors.New("the chart rendered no Deployment")
	}
	return out, nil
}
