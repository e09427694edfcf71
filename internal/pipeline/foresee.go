package pipeline

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"helm.sh/helm/v4/pkg/release/common"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// Upgraded is the world as a Helm upgrade would leave it, as a preview
// predicts it from the server's answers to dry-runs of exactly the
// requests the upgrade sends.
type Upgraded struct {
	// Release is the release the upgrade would store (its manifest, chart,
	// values and apply method); Foresee stores it, in memory only, as the
	// next version, deployed.
	Release *helmv1.Release
	// Objects are the objects the upgrade writes, as the server would store
	// them, by ID; a nil value is an object the upgrade deletes.
	Objects map[manifest.ID]*unstructured.Unstructured
}

// Foresee runs a read-only pass over the world as up would leave it, so
// that what the add-on does after an upgrade is decided by the same gates
// and rules as every pass, not guessed: the HelmRelease's history names
// up's release; Helm's storage holds it (the release deployed now is
// superseded); and every read of an object up writes returns what the
// server would store. Nothing is written anywhere. The pass's own requests
// to the server are those of a read-only pass: reads, and the dry-runs
// that confirm drift, which the server answers against the object live
// now; for a template the upgrade leaves alone, that is the object after
// it.
func (e *Engine) Foresee(ctx context.Context, hr *helmv2.HelmRelease, tg *target.Target, up Upgraded) (*Result, error) {
	next := *up.Release
	info := *next.Info
	info.Status = common.StatusDeployed
	next.Info = &info
	secret, err := encodeRelease(&next)
	if err != nil {
		return nil, err
	}
	in := hr.DeepCopy()
	in.Status.History = append(helmv2.Snapshots{{Name: next.Name, Namespace: next.Namespace, Version: next.Version,
		Status: string(common.StatusDeployed), ChartName: next.Chart.Metadata.Name, ChartVersion: next.Chart.Metadata.Version}},
		hr.Status.History...)
	world := &upgradedClient{Client: tg.Client, reader: tg.Read(), objects: up.Objects, secret: secret}
	t := &target.Target{Client: world, Secrets: upgradedSecrets{base: tg.Secrets, secret: secret},
		Key: tg.Key + "|upgraded", Remote: tg.Remote}
	return e.Run(ctx, Request{HelmRelease: in, Target: t, ReadOnly: true})
}

// encodeRelease is the Secret Helm's Secrets driver would store rel in,
// encoded by the driver itself into a Secrets client that keeps it in
// memory.
func encodeRelease(rel *helmv1.Release) (*corev1.Secret, error) {
	keep := &keptSecret{}
	if err := driver.NewSecrets(keep).Create(release.SecretName(rel.Name, rel.Version), rel); err != nil {
		return nil, fmt.Errorf("failed to encode the upgraded release %s: %w", rel.Name, err)
	}
	s := keep.secret
	s.Namespace = rel.Namespace
	// A UID of its own, so that no memo takes it for a stored Secret.
	s.UID = types.UID(fmt.Sprintf("upgraded-%s-%d", rel.Name, rel.Version))
	s.ResourceVersion = "0"
	return s, nil
}

// keptSecret is the Secrets client encodeRelease hands to Helm's driver:
// Create keeps the Secret; nothing else is called.
type keptSecret struct {
	corev1client.SecretInterface
	secret *corev1.Secret
}

func (k *keptSecret) Create(_ context.Context, s *corev1.Secret, _ metav1.CreateOptions) (*corev1.Secret, error) {
	k.secret = s.DeepCopy()
	return s, nil
}

// upgradedSecrets serves Helm's storage as the upgrade would leave it to
// the release reader: the upgraded release's Secret, then the stored ones.
type upgradedSecrets struct {
	base   corev1client.SecretsGetter
	secret *corev1.Secret
}

func (u upgradedSecrets) Secrets(namespace string) corev1client.SecretInterface {
	return upgradedSecretInterface{SecretInterface: u.base.Secrets(namespace), namespace: namespace, secret: u.secret}
}

type upgradedSecretInterface struct {
	corev1client.SecretInterface
	namespace string
	secret    *corev1.Secret
}

func (u upgradedSecretInterface) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	if u.namespace == u.secret.Namespace && name == u.secret.Name {
		return u.secret.DeepCopy(), nil
	}
	return u.SecretInterface.Get(ctx, name, opts)
}
