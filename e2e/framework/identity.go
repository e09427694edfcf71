package framework

import (
	"context"
	"fmt"
	"os"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// tokenSeconds is how long a requested token lasts: longer than any spec.
const tokenSeconds = 2 * 60 * 60

// ServiceAccountKubeConfig requests a token of the ServiceAccount
// namespace/name from the TokenRequest API, as the kubelet does for a Pod,
// and writes a kubeconfig at path that authenticates with that token only:
// the API server's address and CA, no client certificate. admin makes the
// request (the kubelet's part). It returns the token's rest.Config.
func ServiceAccountKubeConfig(ctx context.Context, admin *rest.Config, namespace, name, path string) (*rest.Config, error) {
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, fmt.Errorf("failed to create clientset: %w", err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](tokenSeconds)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to request a token of ServiceAccount %s/%s: %w", namespace, name, err)
	}
	cfg := &rest.Config{Host: admin.Host, BearerToken: tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData}}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["api"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: "api", AuthInfo: name, Namespace: namespace}
	kc.CurrentContext = name
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return nil, fmt.Errorf("failed to write the kubeconfig of %s/%s: %w", namespace, name, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, err
	}
	return cfg, nil
}

// WhoAmI returns the user name the API server authenticates cfg as
// (SelfSubjectReview, `kubectl auth whoami`).
func WhoAmI(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("failed to create clientset: %w", err)
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("failed to review the token's identity: %w", err)
	}
	return r.Status.UserInfo.Username, nil
}
