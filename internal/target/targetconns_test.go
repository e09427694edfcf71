package target

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestDroppedRemoteTargetClosesItsConnections: a kubeconfig with credentials
// of its own gets a transport of its own; when a rewrite of its Secret
// drops the target, its idle connections close at once rather than after
// client-go's 90 s idle timeout. A tenant that rewrites its kubeconfig in a
// loop held one connection per rewrite of the last 90 s (the memory
// scenario of `make chaos`: 543 sockets after 4,000 rewrites).
func TestDroppedRemoteTargetClosesItsConnections(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	var open atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	secret, hr := tenantKubeConfig()
	secret.Data["value"] = certKubeConfig(t, srv.URL, ca, 1)
	c := fake.NewClientBuilder().WithObjects(secret).Build()
	targets := &Targets{Local: &rest.Config{Host: "https://127.0.0.1:1"}, Reader: c}
	tg, err := targets.For(ctx, hr)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = tg.Secrets.Secrets("tenant").Get(ctx, "x", metav1.GetOptions{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	// The target's connection, and perhaps one of Flux's probe of the
	// server (its check for API priority and fairness) when the target was
	// built.
	before := open.Load()
	g.Expect(before).To(BeNumerically(">=", 1))

	// The tenant rewrites its kubeconfig with another client certificate.
	secret.Data["value"] = certKubeConfig(t, srv.URL, ca, 2)
	g.Expect(c.Update(ctx, secret)).To(Succeed())
	// Building the new target probes the server once more, on a
	// connection of the new credentials: one more, one fewer.
	_, err = targets.For(ctx, hr)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(open.Load).WithTimeout(5*time.Second).Should(BeNumerically("<=", before), "the dropped target's connection is closed")
	g.Consistently(open.Load).WithTimeout(time.Second).Should(BeNumerically("<=", before))
}

// certKubeConfig is a kubeconfig of server (trusting ca) with a client
// certificate of its own, numbered serial.
func certKubeConfig(t *testing.T, server string, ca []byte, serial int64) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: fmt.Sprint("tenant-", serial)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(b []byte) string { return encodeBase64(b) }
	return []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `", certificate-authority-data: "` + b64(ca) + `"}}]
users: [{name: u, user: {client-certificate-data: "` + b64(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) +
		`", client-key-data: "` + b64(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})) + `"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`)
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
