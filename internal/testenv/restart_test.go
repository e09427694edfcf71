package testenv_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// TestRestartAPIServer: a restart keeps etcd's data, the port and the
// certificates, so a client built from a user's kubeconfig before the
// restart reads through it afterwards (a controller run as a process
// reconnects without a new kubeconfig).
func TestRestartAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := testenv.Start("restart")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(env.Stop()).To(Succeed()) })
	kubeconfig, err := env.AddUser("restart-user", []string{"system:masters"})
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: "default"}, Data: map[string]string{"a": "1"}}
	g.Expect(c.Create(ctx, cm)).To(Succeed())

	g.Expect(env.RestartAPIServer()).To(Succeed())
	g.Expect(strings.TrimSuffix(env.Config.Host, "/")).To(Equal(strings.TrimSuffix(cfg.Host, "/")), "same address")
	got := &corev1.ConfigMap{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cm), got)).To(Succeed(), "same certificates, same etcd")
	g.Expect(got.Data).To(Equal(map[string]string{"a": "1"}))
	g.Expect(env.RestartAPIServer()).To(Succeed(), "twice")
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cm), got)).To(Succeed())
}
