package framework

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Deployed is the container of a rendered Deployment translated into a
// local process, changed only where a process on a shared machine must
// differ from a Pod: each address the container listens on moves to a free
// 127.0.0.1 port, and the downward API is resolved. Anything it cannot
// translate faithfully (a command override, a second container, an
// unresolvable variable) is an error, so the suite never runs something
// other than what the chart deploys.
type Deployed struct {
	// Args are the container's arguments as rendered.
	Args []string
	// Env is the container's environment, resolved, as NAME=value.
	Env []string
	// listens are the arguments that bind a container port, in Args order.
	listens []listen
	// liveness and readiness are the probes' paths, and the indexes in
	// listens of the ports they ask.
	liveness, readiness probeAt
}

// listen is an argument --flag=[host]:port whose port a container port
// declares.
type listen struct {
	arg  int    // index in Args
	flag string // "--metrics-addr"
	port corev1.ContainerPort
}

// probeAt is an HTTP probe of a listening port.
type probeAt struct {
	path   string
	listen int // index in Deployed.listens
}

// TranslateDeployment translates d's single container for a local process.
func TranslateDeployment(d *appsv1.Deployment) (*Deployed, error) {
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
		return nil, fmt.Errorf("the Deployment %s has %d containers and %d init containers, want one container", d.Name, len(spec.Containers), len(spec.InitContainers))
	}
	c := spec.Containers[0]
	if len(c.Command) > 0 {
		return nil, fmt.Errorf("container %s overrides the image's entrypoint with %q", c.Name, c.Command)
	}
	if len(c.EnvFrom) > 0 {
		return nil, fmt.Errorf("container %s has envFrom, which is not translated", c.Name)
	}
	out := &Deployed{Args: append([]string(nil), c.Args...)}
	for i, a := range c.Args {
		flag, value, ok := strings.Cut(a, "=")
		if !ok || !strings.HasPrefix(flag, "--") {
			continue
		}
		_, port, err := net.SplitHostPort(value)
		if err != nil {
			continue // not an address (a URL, a duration, ...)
		}
		for _, p := range c.Ports {
			if strconv.Itoa(int(p.ContainerPort)) == port {
				out.listens = append(out.listens, listen{arg: i, flag: flag, port: p})
			}
		}
	}
	for _, p := range c.Ports {
		if out.listenOf(intstr.FromInt32(p.ContainerPort)) < 0 {
			return nil, fmt.Errorf("container port %s (%d) is bound by no argument of %q", p.Name, p.ContainerPort, c.Args)
		}
	}
	var err error
	if out.liveness, err = out.probe("liveness", c.LivenessProbe); err != nil {
		return nil, err
	}
	if out.readiness, err = out.probe("readiness", c.ReadinessProbe); err != nil {
		return nil, err
	}
	for _, e := range c.Env {
		v, err := envValue(d, c, e)
		if err != nil {
			return nil, err
		}
		out.Env = append(out.Env, e.Name+"="+v)
	}
	return out, nil
}

// listenOf returns the index in listens of the container port named or
// numbered port, or -1.
func (d *Deployed) listenOf(port intstr.IntOrString) int {
	for i, l := range d.listens {
		if (port.Type == intstr.String && l.port.Name == port.StrVal) || (port.Type == intstr.Int && l.port.ContainerPort == port.IntVal) {
			return i
		}
	}
	return -1
}

// probe resolves an HTTP probe to the listening port it asks.
func (d *Deployed) probe(what string, p *corev1.Probe) (probeAt, error) {
	if p == nil || p.HTTPGet == nil {
		return probeAt{}, fmt.Errorf("the container has no HTTP %s probe", what)
	}
	i := d.listenOf(p.HTTPGet.Port)
	if i < 0 {
		return probeAt{}, fmt.Errorf("the %s probe asks port %s, which no argument binds", what, p.HTTPGet.Port.String())
	}
	return probeAt{path: p.HTTPGet.Path, listen: i}, nil
}

// Ports is the number of addresses the process listens on.
func (d *Deployed) Ports() int { return len(d.listens) }

// ArgsFor returns Args with the i-th listening argument bound to addrs[i].
func (d *Deployed) ArgsFor(addrs []string) []string {
	args := append([]string(nil), d.Args...)
	for i, l := range d.listens {
		args[l.arg] = l.flag + "=" + addrs[i]
	}
	return args
}

// PortAddr returns the address of the container port named or numbered
// port among addrs (as given to ArgsFor), for a Service's targetPort.
func (d *Deployed) PortAddr(addrs []string, port intstr.IntOrString) (string, bool) {
	i := d.listenOf(port)
	if i < 0 {
		return "", false
	}
	return addrs[i], true
}

// envValue resolves one variable as the kubelet would for a Pod of d.
func envValue(d *appsv1.Deployment, c corev1.Container, e corev1.EnvVar) (string, error) {
	switch from := e.ValueFrom; {
	case from == nil:
		return e.Value, nil
	case from.FieldRef != nil:
		switch from.FieldRef.FieldPath {
		case "metadata.namespace":
			return d.Namespace, nil
		case "spec.serviceAccountName":
			return d.Spec.Template.Spec.ServiceAccountName, nil
		}
		return "", fmt.Errorf("variable %s: field %s is not translated", e.Name, from.FieldRef.FieldPath)
	case from.ResourceFieldRef != nil:
		return resourceValue(c, e.Name, from.ResourceFieldRef)
	}
	return "", fmt.Errorf("variable %s: its source is not translated", e.Name)
}

// resourceValue is a resourceFieldRef's value, rounded up to its divisor
// as the kubelet does.
func resourceValue(c corev1.Container, name string, ref *corev1.ResourceFieldSelector) (string, error) {
	section, res, _ := strings.Cut(ref.Resource, ".")
	list := c.Resources.Limits
	if section == "requests" {
		list = c.Resources.Requests
	}
	q, ok := list[corev1.ResourceName(res)]
	if !ok {
		return "", fmt.Errorf("variable %s: the container sets no %s", name, ref.Resource)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if res == string(corev1.ResourceCPU) {
		return strconv.FormatInt((q.MilliValue()+divisor.MilliValue()-1)/divisor.MilliValue(), 10), nil
	}
	return strconv.FormatInt((q.Value()+divisor.Value()-1)/divisor.Value(), 10), nil
}
