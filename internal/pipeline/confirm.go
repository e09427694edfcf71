package pipeline

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/templatedrift/template-drift-controller/internal/apply"
	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/plan"
)

// confirm keeps only the raw changes of in that are drift: those where the
// server, given the manifest's object, would store something other than
// what is live. API version conversion (Cluster API and CAPM3 store
// v1beta2 and serve v1beta1) changes values on the way back, so the raw
// diff alone would correct templates that have no drift, forever.
//
// The server's view comes from a dry-run the pass needs anyway where it
// can: the in-place dry-run, when the strategy needs one and the server
// accepts it, answers with the corrected object. Otherwise (refused, or an
// explicit rotate or recreate) a dry-run create of the desired object under
// a probe name answers. So a template costs no dry-run when its raw diff is
// empty, one when its drift is false or mutable, and two only when the
// in-place dry-run is refused (a locked template). When the dry-run create
// is refused too, the raw changes are kept, unconfirmed, and in.Unconfirmed
// says why.
//
// It sets in.Changes, and in.DryRun and in.DryRunMessage when the in-place
// dry-run ran, and returns the server's view (nil when there is none), with
// which the replacement's changes are confirmed as well. It asks through
// Target.Ask, which may answer a request asked before without a request.
// An error is a failure to answer, worth retrying the pass.
func (p *pass) confirm(ctx context.Context, in *plan.TemplateInput) (*unstructured.Unstructured, error) {
	c := p.target.Ask()
	var view *unstructured.Unstructured
	if plan.NeedsDryRun(in.Requested) {
		v, err := apply.DryRunInPlace(ctx, c, in.Live, in.Changes)
		dryRun, retry := plan.InPlaceDryRun(err)
		if retry {
			return nil, err
		}
		in.DryRun, view = dryRun, v
		if err != nil {
			in.DryRunMessage = err.Error()
		}
	}
	if view == nil {
		v, err := apply.ServerView(ctx, c, in.Desired)
		why, retry := plan.UnconfirmedDrift(err)
		if err != nil && retry {
			return nil, err
		}
		view, in.Unconfirmed = v, why
	}
	return p.confirmWith(ctx, in, view), nil
}

// confirmWith sets on in what the server answered, keeps only the changes
// it confirms, and returns its view.
func (p *pass) confirmWith(ctx context.Context, in *plan.TemplateInput, view *unstructured.Unstructured) *unstructured.Unstructured {
	logger := log.FromContext(ctx).V(1).WithValues("template", klog.KObj(in.Live), "kind", in.Live.GetKind())
	if view == nil {
		logger.Info("Keeping the raw diff: the server refuses a dry-run create of the manifest's object", "reason", in.Unconfirmed)
		return nil
	}
	kept, serverMade := diff.Confirm(in.Changes, view, in.Live)
	if len(serverMade) > 0 {
		logger.Info("Ignoring differences the server makes itself", "diff", diff.Summary(serverMade, 80, 10))
	}
	in.Changes = kept
	return view
}
