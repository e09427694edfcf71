package controllers_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// secretReads counts the Secret Gets made through it and, with failFirst,
// fails the first with a 500, as an API server that sheds load does.
type secretReads struct {
	corev1client.SecretsGetter
	failFirst bool
	gets      atomic.Int64
	failed    atomic.Int32
}

func (f *secretReads) Secrets(ns string) corev1client.SecretInterface {
	return secretRead{SecretInterface: f.SecretsGetter.Secrets(ns), f: f}
}

type secretRead struct {
	corev1client.SecretInterface
	f *secretReads
}

func (s secretRead) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	s.f.gets.Add(1)
	if s.f.failFirst && s.f.failed.CompareAndSwap(0, 1) {
		return nil, apierrors.NewInternalError(errors.New("injected"))
	}
	return s.SecretInterface.Get(ctx, name, opts)
}

// TestReleaseReadFailureIsRetried: a 500 while reading the stored release
// fails the pass, which the rate limiter retries within seconds; it says
// nothing about the release, so it is not ReleaseUnavailable (a Warning
// event, and a fixed 30 s wait). The chaos matrix's lossy scenario found
// releases reported ReleaseUnavailable after one such 500.
func TestReleaseReadFailureIsRetried(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt})
	tg, err := w.r.Engine.Targets.For(w.ctx, w.hr)
	w.g.Expect(err).NotTo(HaveOccurred())
	flaky := &secretReads{SecretsGetter: tg.Secrets, failFirst: true}
	w.r.Engine.Targets = staticTarget{t: &target.Target{Client: tg.Client, Secrets: flaky, Key: "flaky"}}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w.hr)}
	_, err = w.r.Reconcile(w.ctx, req)
	w.g.Expect(flaky.failed.Load()).To(BeEquivalentTo(1))
	w.g.Expect(apierrors.IsInternalError(err)).To(BeTrue(), "the pass fails with the server's 500, and is retried with back-off: %v", err)
	w.g.Expect(reasonOf(w.condition())).NotTo(Equal(api.ReleaseUnavailableReason))
	_, err = w.r.Reconcile(w.ctx, req)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(reasonOf(w.condition())).To(Equal(api.DriftCorrectedReason))
}
