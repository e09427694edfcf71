package controllers_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/target"
)

// TestConflictIsRetriedQuietly: losing a write race is not a failure: the
// pass starts over soon, and no CorrectionFailed is reported.
func TestConflictIsRetriedQuietly(t *testing.T) {
	w := newWorld(t, scenario{annotations: enabled, live: bootstrap, release: mgmt})
	tg, err := w.r.Engine.Targets.For(w.ctx, w.hr)
	w.g.Expect(err).NotTo(HaveOccurred())
	conflicted := false
	racy := interceptor.NewClient(env.Client, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			po := &client.PatchOptions{}
			po.ApplyOptions(opts)
			if len(po.DryRun) == 0 && !conflicted {
				conflicted = true
				return apierrors.NewConflict(schema.GroupResource{Resource: "metal3machinetemplates"}, o.GetName(), nil)
			}
			return c.Patch(ctx, o, p, opts...)
		},
	})
	w.r.Engine.Targets = staticTarget{t: &target.Target{Client: racy, Secrets: tg.Secrets, Key: "racy"}}
	_, err = w.r.Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w.hr)})
	w.g.Expect(err).To(MatchError(apply.ErrConflict), "the pass is retried with the rate limiter's back-off")
	w.g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "the server's 409 is kept in the chain")
	w.g.Expect(w.condition()).To(BeNil(), "no failure reported for a lost race")
	w.g.Expect(w.events()).To(BeEmpty())
	_, err = w.r.Reconcile(w.ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w.hr)})
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(reasonOf(w.condition())).To(Equal(api.DriftCorrectedReason))
}
