package apply

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestValidateCreateTellsARefusalFromNoAnswer: a recreate's dry-run that
// the server refuses says the manifest's object is refused; one that got
// no answer (a 500 through the lossy proxy of `make chaos`) used to say
// the same, and now says the server did not answer.
func TestValidateCreateTellsARefusalFromNoAnswer(t *testing.T) {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
	obj.SetKind("LockedMachineTemplate")
	obj.SetNamespace("fleet")
	obj.SetName("spare-locked")
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"refused", apierrors.NewInvalid(schema.GroupKind{Kind: "LockedMachineTemplate"}, "spare-locked", nil), "the server refuses the manifest's object"},
		{"no answer", apierrors.NewInternalError(errors.New("injected")), "the server did not answer the dry-run"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return tc.err },
			}).Build()
			err := (&writer{c: c}).validateCreate(context.Background(), obj)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
			g.Expect(err).To(MatchError(tc.err))
		})
	}
}
