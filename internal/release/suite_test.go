package release_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// The integration tests share one control plane, started by the first test
// that needs it (unit tests and fuzzing never start one) and stopped by
// TestMain.
var (
	envOnce   sync.Once
	sharedEnv *testenv.Env
	sharedCS  *kubernetes.Clientset
	envErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedEnv != nil {
		if err := sharedEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// clusterEnv returns the shared control plane and a typed clientset for it.
func clusterEnv(t *testing.T) (*testenv.Env, *kubernetes.Clientset) {
	t.Helper()
	envOnce.Do(func() {
		sharedEnv, envErr = testenv.Start("release")
		if envErr == nil {
			sharedCS, envErr = kubernetes.NewForConfig(sharedEnv.Config)
		}
	})
	if envErr != nil {
		t.Fatalf("failed to start the test control plane: %v", envErr)
	}
	return sharedEnv, sharedCS
}

// newNamespace creates a namespace of its own for one test.
func newNamespace(t *testing.T, cs *kubernetes.Clientset) string {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "release-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("failed to create namespace: %v", err)
	}
	return ns.Name
}
