package release

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// fakeSecrets serves release Secrets from memory to Helm's driver, without
// an API server. Only Get is implemented: any other call panics on the nil
// embedded interface, which would show the driver (or this package) doing
// something unexpected.
type fakeSecrets struct {
	corev1client.SecretInterface
	secrets map[string]*corev1.Secret
}

var _ corev1client.SecretsGetter = (*fakeSecrets)(nil)

func (f *fakeSecrets) Secrets(string) corev1client.SecretInterface { return f }

func (f *fakeSecrets) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Secret, error) {
	s, ok := f.secrets[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
	return s.DeepCopy(), nil
}

// fakeSource returns a Source whose only Secret is release name.v<version>
// with data.release set to data. It has no Meta, so every Get decodes.
func fakeSource(name string, version int, data []byte) Source {
	key := SecretName(name, version)
	return Source{Key: "fake", Secrets: &fakeSecrets{secrets: map[string]*corev1.Secret{key: {
		ObjectMeta: metav1.ObjectMeta{Name: key, UID: types.UID("uid-" + key), ResourceVersion: "1"},
		Type:       "helm.sh/release.v1",
		Data:       map[string][]byte{"release": data},
	}}}}
}

// helmEncode encodes release JSON as Helm's driver stores it in data.release:
// base64(gzip(JSON)).
func helmEncode(t testing.TB, releaseJSON []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(releaseJSON); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(base64.StdEncoding.EncodeToString(buf.Bytes()))
}

// fixtureJSON reads testdata/digest/<file> and the release name and version
// it declares.
func fixtureJSON(t testing.TB, file string) (data []byte, name string, version int) {
	t.Helper()
	data, err := os.ReadFile("testdata/digest/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		Name    string `json:"name"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		t.Fatal(err)
	}
	return data, head.Name, head.Version
}

// decodeFixture reads a fixture through Helm's driver and this package, as
// Reader.Get does for a Secret in a cluster.
func decodeFixture(t testing.TB, file string) *Release {
	t.Helper()
	data, name, version := fixtureJSON(t, file)
	rel, err := NewReader(0).Get(context.Background(), fakeSource(name, version, helmEncode(t, data)), "ns", name, version)
	if err != nil {
		t.Fatalf("failed to decode fixture %s: %v", file, err)
	}
	return rel
}
