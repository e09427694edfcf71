//go:build e2e

// Package e2e is the ginkgo end-to-end suite (`make e2e`): the real
// helm-controller, kustomize-controller, source-controller,
// notification-controller and flux CLI, a chart repository and an OCI
// registry on 127.0.0.1 and a real `clusterctl move` between two API
// servers. The add-on is installed as
// config/flux documents: helm-controller installs its released chart, which
// source-controller pulls from the registry, and the suite runs the binary
// as the Deployment says, as its ServiceAccount. E2E_WITHOUT_ADDON=1 is
// its negative control.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/templatedrift/template-drift-controller/e2e/framework"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// suite is what every spec shares: the binaries, the chart repository,
// the registry holding the add-on's chart, the chart's oci:// URL, the
// documented Flux install and the artifacts folder.
var suite struct {
	bins      framework.Binaries
	repo      *framework.ChartRepo
	registry  *framework.OCIRegistry
	addonURL  string
	fluxDir   string
	artifacts string
}

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "template-drift-controller e2e")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter)))
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	var err error
	suite.bins, err = framework.DefaultBinaries()
	Expect(err).NotTo(HaveOccurred())
	root, err := testenv.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	suite.fluxDir = filepath.Join(root, "config", "flux")
	suite.artifacts = filepath.Join(root, "_artifacts", "e2e", time.Now().Format("20060102-150405"))
	Expect(os.MkdirAll(suite.artifacts, 0o755)).To(Succeed())
	suite.registry, err = framework.StartOCIRegistry()
	Expect(err).NotTo(HaveOccurred())
	suite.addonURL, err = suite.registry.PushAddonChart(context.Background(), suite.bins.ReleaseTool,
		filepath.Join(root, "charts", "template-drift-controller"), suite.artifacts)
	Expect(err).NotTo(HaveOccurred())
	suite.repo, err = framework.ServeChart(filepath.Join(root, "e2e", "testdata", "charts", "cluster"))
	Expect(err).NotTo(HaveOccurred())
	fmt.Fprintf(GinkgoWriter, "chart repository at %s, the add-on's chart at %s, artifacts in %s\n",
		suite.repo.URL, suite.addonURL, suite.artifacts)
})

var _ = AfterSuite(func() {
	if suite.repo != nil {
		suite.repo.Close()
	}
	if suite.registry != nil {
		suite.registry.Close()
	}
})

var _ = Describe("Pivot, client-side apply release (first installed by Helm 3)", func() {
	PivotSpec(context.Background(), func() PivotSpecInput {
		return PivotSpecInput{Name: "csa", SSA: false, Locked: false}
	})
})

var _ = Describe("Pivot with locked templates, client-side apply release, add-on in the lockdown; a rollout approved", func() {
	PivotSpec(context.Background(), func() PivotSpecInput {
		return PivotSpecInput{Name: "csa-locked", SSA: false, Locked: true, Lockdown: true, LockedPool: true}
	})
})

var _ = Describe("Pivot, server-side apply release (helm-controller v1.6 default), add-on in the lockdown", func() {
	PivotSpec(context.Background(), func() PivotSpecInput {
		return PivotSpecInput{Name: "ssa", SSA: true, Locked: false, Lockdown: true}
	})
})

var _ = Describe("Pivot with a locked template, server-side apply release", func() {
	PivotSpec(context.Background(), func() PivotSpecInput {
		return PivotSpecInput{Name: "ssa-locked", SSA: true, Locked: true}
	})
})
