package framework

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// Addon is the add-on binary running as its chart deploys it.
type Addon struct {
	*Process
	// User is the identity the API server authenticates it as.
	User string
	// deployed is the translated container, and addrs the addresses it
	// listens on, in deployed's order.
	deployed *Deployed
	addrs    []string
	// dir holds its kubeconfig; Stop removes it.
	dir string
}

// StartAddon runs bin as chart's Deployment says (TranslateDeployment),
// with the identity of its Pod: a token of the Deployment's ServiceAccount
// from the TokenRequest API, in a kubeconfig that holds nothing else. It
// waits until the liveness and readiness probes pass. An unknown flag or
// an identity the API server refuses ends it before then, which fails the
// start.
func StartAddon(ctx context.Context, name string, env *testenv.Env, chart *AddonChart, bin, artifacts string) (*Addon, error) {
	deployed, err := TranslateDeployment(chart.Deployment)
	if err != nil {
		return nil, fmt.Errorf("failed to translate the chart's Deployment: %w", err)
	}
	a := &Addon{deployed: deployed}
	if a.dir, err = os.MkdirTemp("", "tdc-e2e-addon-"); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(a.dir, "kubeconfig")
	sa := chart.Deployment.Spec.Template.Spec.ServiceAccountName
	cfg, err := ServiceAccountKubeConfig(ctx, env.Config, chart.Namespace, sa, kubeconfig)
	if err == nil {
		a.User, err = WhoAmI(ctx, cfg)
	}
	if err != nil {
		a.Stop()
		return nil, err
	}
	a.Process, err = StartServing(name, bin, deployed.Ports(), deployed.liveness.listen, func(addrs []string) []string {
		a.addrs = addrs
		return deployed.ArgsFor(addrs)
	}, append(append([]string(nil), deployed.Env...), "KUBECONFIG="+kubeconfig), artifacts)
	if err != nil {
		a.Stop()
		return nil, err
	}
	for _, p := range []probeAt{deployed.liveness, deployed.readiness} {
		if err := a.waitOK(ctx, "http://"+a.addrs[p.listen]+p.path); err != nil {
			a.Stop()
			return nil, err
		}
	}
	return a, nil
}

// waitOK polls url until it answers 200, as a probe passes.
func (a *Addon) waitOK(ctx context.Context, url string) error {
	c := &http.Client{Timeout: time.Second}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	for {
		if a.Exited() {
			return fmt.Errorf("%s exited (see %s)", a.Name, a.LogPath)
		}
		if resp, err := c.Get(url); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %s did not answer 200: %w", a.Name, url, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Scrape GETs path from the container port that port of svc targets, as
// Prometheus scrapes through the Service, and returns the body.
func (a *Addon) Scrape(svc corev1.Service, port, path string) (string, error) {
	for _, p := range svc.Spec.Ports {
		if p.Name != port {
			continue
		}
		target := p.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(p.Port)
		}
		addr, ok := a.deployed.PortAddr(a.addrs, target)
		if !ok {
			return "", fmt.Errorf("the Service %s: port %s targets %s, which the container does not declare", svc.Name, port, target.String())
		}
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		return string(body), err
	}
	return "", fmt.Errorf("the Service %s has no port %s", svc.Name, port)
}

// Stop stops the process and removes its kubeconfig. It is safe to call on
// nil and more than once.
func (a *Addon) Stop() {
	if a == nil {
		return
	}
	a.Process.Stop()
	if a.dir != "" {
		_ = os.RemoveAll(a.dir)
	}
}
