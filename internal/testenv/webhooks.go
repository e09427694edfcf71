package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// webhookURL is where the API server calls a manager's webhook: always
// loopback, the serving certificate's only IP.
func webhookURL(port, path string) string {
	return "https://127.0.0.1:" + port + path
}

// useConversionWebhook points every multi-version CRD at its manager's
// /convert endpoint, the part of each provider's kustomize overlay
// (config/crd/patches/webhook_in_*.yaml plus cert-manager's CA injection)
// that the module's bases/ lack.
func useConversionWebhook(ctx context.Context, c client.Client, names []string, port string, caPEM []byte) error {
	url := webhookURL(port, "/convert")
	for _, name := range names {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return false, err
			}
			if len(crd.Spec.Versions) < 2 {
				return true, nil
			}
			crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
					ConversionReviewVersions: []string{"v1", "v1beta1"},
				},
			}
			err := c.Update(ctx, crd)
			if err != nil && !apierrors.IsConflict(err) {
				return false, err
			}
			return err == nil, nil
		})
		if err != nil {
			return fmt.Errorf("failed to point CRD %s at its conversion webhook: %w", name, err)
		}
	}
	return nil
}

// webhookConfigurations reads a provider's config/webhook/manifests.yaml
// and rewrites it as kustomize and cert-manager would for a cluster: the
// configurations get the provider's name as prefix, and each webhook calls
// its manager at 127.0.0.1:port with the test CA.
func webhookConfigurations(p provider, port string, caPEM []byte) ([]client.Object, error) {
	data, err := os.ReadFile(filepath.Join(p.Dir, "webhooks.yaml"))
	if err != nil {
		return nil, fmt.Errorf("failed to read webhooks of %s: %w", p.Name, err)
	}
	var out []client.Object
	for _, doc := range strings.Split(string(data), "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		obj, err := rewriteWebhooks([]byte(doc), p.Name, port, caPEM)
		if err != nil {
			return nil, fmt.Errorf("failed to rewrite webhooks of %s: %w", p.Name, err)
		}
		if obj != nil {
			out = append(out, obj)
		}
	}
	return out, nil
}

func rewriteWebhooks(doc []byte, prefix, port string, caPEM []byte) (client.Object, error) {
	var meta struct{ Kind string }
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return nil, err
	}
	clientConfig := func(cc *admissionregistrationv1.WebhookClientConfig) error {
		if cc.Service == nil || cc.Service.Path == nil {
			return errors.New("webhook without service path")
		}
		url := webhookURL(port, *cc.Service.Path)
		*cc = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM}
		return nil
	}
	switch meta.Kind {
	case "MutatingWebhookConfiguration":
		m := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := yaml.UnmarshalStrict(doc, m); err != nil {
			return nil, err
		}
		m.Name = prefix + "-" + m.Name
		for i := range m.Webhooks {
			if err := clientConfig(&m.Webhooks[i].ClientConfig); err != nil {
				return nil, err
			}
		}
		return m, nil
	case "ValidatingWebhookConfiguration":
		v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := yaml.UnmarshalStrict(doc, v); err != nil {
			return nil, err
		}
		v.Name = prefix + "-" + v.Name
		for i := range v.Webhooks {
			if err := clientConfig(&v.Webhooks[i].ClientConfig); err != nil {
				return nil, err
			}
		}
		return v, nil
	}
	return nil, nil
}

// waitWebhooksServe dry-run creates p's probe until the provider's own
// webhook refuses it. Until then the API server may not call the webhook
// yet (it picks up new configurations through an informer) or the
// conversion is not in effect, and objects created then would skip them.
func waitWebhooksServe(ctx context.Context, c client.Client, p provider) error {
	probe := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(p.Probe), &probe.Object); err != nil {
		return fmt.Errorf("failed to decode webhook probe of %s: %w", p.Name, err)
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		last = c.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		return last != nil && strings.Contains(last.Error(), "denied the request"), nil
	})
	if err != nil {
		answer := "accepted"
		if last != nil {
			answer = last.Error()
		}
		return fmt.Errorf("webhooks of %s do not serve (last answer to a %s the webhook must refuse: %s): %w",
			p.Name, probe.GetKind(), answer, err)
	}
	return nil
}
