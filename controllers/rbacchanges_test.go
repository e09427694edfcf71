package controllers

import (
	"context"
	"errors"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// TestWatchRBACAsksAgainAfterALostAnswer: the access reviews watchRBAC
// makes at start are asked again after a failure that may pass (a 500, a
// lost response), as the rest of the start is: one such failure used to
// stop the controller. A refusal to review stops it at once.
func TestWatchRBACAsksAgainAfterALostAnswer(t *testing.T) {
	review := func(failures int, failWith error) (*fake.Clientset, *int) {
		cs := fake.NewClientset()
		calls := 0
		cs.PrependReactor("create", "selfsubjectaccessreviews", func(clienttesting.Action) (bool, runtime.Object, error) {
			calls++
			if calls <= failures {
				return true, nil, failWith
			}
			// Not allowed: watchRBAC logs that it does not watch, and needs no cache.
			return true, &authorizationv1.SelfSubjectAccessReview{}, nil
		})
		return cs, &calls
	}
	g := NewWithT(t)
	cs, calls := review(2, apierrors.NewInternalError(errors.New("stream reset")))
	g.Expect(watchRBAC(context.Background(), logr.Discard(), cs, nil, nil)).To(Succeed())
	g.Expect(*calls).To(Equal(3), "two failures that may pass, then the answer")

	cs, calls = review(1, apierrors.NewForbidden(authorizationv1.Resource("selfsubjectaccessreviews"), "", errors.New("no")))
	g.Expect(watchRBAC(context.Background(), logr.Discard(), cs, nil, nil)).To(MatchError(ContainSubstring("forbidden")))
	g.Expect(*calls).To(Equal(1), "a refusal is not asked again")
}
