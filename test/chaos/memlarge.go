package chaos

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// largePayload returns values and a hook that carry raw bytes of random
// data from seed, in base64: two thirds in the values (a map of strings of
// largeChunk bytes each), the rest in a ConfigMap hook. Random data does
// not compress, so the stored release keeps its size.
func largePayload(seed uint64, raw int) (map[string]any, *helmv1.Hook) {
	rng := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24),
		byte(seed >> 32), byte(seed >> 40), byte(seed >> 48), byte(seed >> 56)})
	random := func(n int) string {
		b := make([]byte, n)
		_, _ = rng.Read(b) // ChaCha8.Read never fails
		return base64.StdEncoding.EncodeToString(b)
	}
	chunks := map[string]any{}
	inValues := raw * 2 / 3
	for i := 0; i*largeChunk < inValues; i++ {
		chunks[fmt.Sprintf("chunk-%04d", i)] = random(min(largeChunk, inValues-i*largeChunk))
	}
	hook := &helmv1.Hook{
		Name: "large-hook", Kind: "ConfigMap", Path: "cluster/templates/large-hook.yaml",
		Events: []helmv1.HookEvent{helmv1.HookPreUpgrade},
		Manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: large-hook\n  annotations:\n    helm.sh/hook: pre-upgrade\n" +
			"data:\n  blob: " + random(raw-inValues) + "\n",
	}
	return map[string]any{"hostile": chunks}, hook
}

// largeRelease is revision version of the release of ns, deployed with
// manifest and apply method, carrying largePayload(seed, largeRaw).
func largeRelease(ns, manifest, method string, version int, seed uint64) *helmv1.Release {
	rel := testenv.Release{Name: "cluster", Namespace: ns, Version: version, Status: "deployed", ApplyMethod: method, Manifest: manifest}.HelmRelease()
	values, hook := largePayload(seed, largeRaw)
	rel.Config, rel.Hooks = values, []*helmv1.Hook{hook}
	return rel
}

// upgradeLarge stores a large revision version of the release of ns with
// Helm's Secrets driver and records it in its HelmRelease's history, as a
// helm-controller upgrade that kept the manifest would. It returns the
// size of the Secret's data.release.
func upgradeLarge(ctx context.Context, c client.Client, secrets corev1client.SecretInterface, ns, manifest, method string, version int, seed uint64) (int, error) {
	rel := largeRelease(ns, manifest, method, version, seed)
	if err := storage.Init(driver.NewSecrets(secrets)).Create(rel); err != nil {
		return 0, fmt.Errorf("failed to store revision %d of the large release of %s: %w", version, ns, err)
	}
	s, err := secrets.Get(ctx, release.SecretName("cluster", version), metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("failed to read revision %d of the large release of %s: %w", version, ns, err)
	}
	if err := recordRelease(ctx, c, ns, rel); err != nil {
		return 0, err
	}
	return len(s.Data["release"]), nil
}

// recordRelease records rel as the latest snapshot of the HelmRelease of
// ns, the ones before it superseded, through the status subresource, with
// the digest helm-controller computes (testenv.SetHistory's, for a release
// that carries values and hooks: the digest covers them).
func recordRelease(ctx context.Context, c client.Client, ns string, rel *helmv1.Release) error {
	hr := &helmv2.HelmRelease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: rel.Name}, hr); err != nil {
		return fmt.Errorf("failed to read HelmRelease %s/%s: %w", ns, rel.Name, err)
	}
	base := hr.DeepCopy()
	for _, s := range hr.Status.History {
		s.Status = "superseded"
	}
	hr.Status.History = append(helmv2.Snapshots{{
		APIVersion: helmv2.CurrentSnapshotAPIVersion,
		Name:       rel.Name, Namespace: rel.Namespace, Version: rel.Version, Status: string(rel.Info.Status),
		Digest:        release.SnapshotDigest(rel),
		ChartName:     rel.Chart.Metadata.Name,
		ChartVersion:  rel.Chart.Metadata.Version,
		ConfigDigest:  "sha256:0000000000000000000000000000000000000000000000000000000000000000",
		FirstDeployed: metav1.NewTime(rel.Info.FirstDeployed),
		LastDeployed:  metav1.NewTime(rel.Info.LastDeployed),
	}}, hr.Status.History...)
	if err := c.Status().Patch(ctx, hr, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to record revision %d in the history of HelmRelease %s/%s: %w", rel.Version, ns, rel.Name, err)
	}
	return nil
}
