package target

import (
	"context"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// TestLogWarningsOnce: an API server warning (such as a deprecation warning
// for Metal3 v1beta1 kinds, sent with every request) is logged once per
// distinct text, and target clients built from the local config inherit it.
func TestLogWarningsOnce(t *testing.T) {
	g := NewWithT(t)
	var lines []string
	logger := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
	ctx := ctrllog.IntoContext(context.Background(), logger)

	cfg := LogWarningsOnce(&rest.Config{Host: "https://127.0.0.1:1"})
	h := cfg.WarningHandlerWithContext
	g.Expect(h).NotTo(BeNil())
	for range 3 {
		h.HandleWarningHeaderWithContext(ctx, 299, "", "infrastructure.cluster.x-k8s.io/v1beta1 Metal3MachineTemplate is deprecated")
	}
	h.HandleWarningHeaderWithContext(ctx, 299, "", "another warning")
	g.Expect(lines).To(HaveLen(2), "each distinct warning once: %v", lines)

	targets := &Targets{Local: cfg}
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: "fleet"}}
	copied, _, _, err := targets.restConfig(context.Background(), hr)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(copied.WarningHandlerWithContext).To(BeIdenticalTo(h), "target clients share the one deduplicating handler")
}
