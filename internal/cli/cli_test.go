package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/internal/version"
)

// kubeconfig has two contexts: one, the current, with a namespace, and
// two without.
const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: one
  cluster: {server: "https://one.example:6443"}
- name: two
  cluster: {server: "https://two.example:6443"}
users:
- name: me
  user: {token: from-kubeconfig}
contexts:
- name: one
  context: {cluster: one, user: me, namespace: fleet}
- name: two
  context: {cluster: two, user: me}
current-context: one
`

// run runs the command line as name and returns its exit code, stdout and
// stderr.
func run(name string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Execute(name, args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestKubeconfigFlags parses kubectl's kubeconfig flags and the client's
// rate on each command and checks what reaches the REST config and the
// namespace the commands use.
func TestKubeconfigFlags(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kubeconfig")
	ca := filepath.Join(dir, "ca.crt")
	NewWithT(t).Expect(os.WriteFile(path, []byte(kubeconfig), 0o600)).To(Succeed())
	NewWithT(t).Expect(os.WriteFile(ca, []byte("not read by the test"), 0o600)).To(Succeed())
	cases := []struct {
		name string
		args []string // flags after --kubeconfig
		// check looks at the REST config and the namespace they give.
		check func(g Gomega, cfg *rest.Config, ns string)
	}{{
		name: "the kubeconfig's current context, at the controller's rate",
		check: func(g Gomega, cfg *rest.Config, ns string) {
			g.Expect(cfg.Host).To(Equal("https://one.example:6443"))
			g.Expect(cfg.BearerToken).To(Equal("from-kubeconfig"))
			g.Expect(ns).To(Equal("fleet"))
			g.Expect(cfg.QPS).To(BeNumerically("==", 50))
			g.Expect(cfg.Burst).To(Equal(300))
		},
	}, {
		name: "--context",
		args: []string{"--context", "two"},
		check: func(g Gomega, cfg *rest.Config, ns string) {
			g.Expect(cfg.Host).To(Equal("https://two.example:6443"))
			g.Expect(ns).To(Equal("default"))
		},
	}, {
		name:  "-n",
		args:  []string{"-n", "other"},
		check: func(g Gomega, _ *rest.Config, ns string) { g.Expect(ns).To(Equal("other")) },
	}, {
		name: "--as and --as-group",
		args: []string{"--as", "alice", "--as-group", "ops", "--as-group", "dev"},
		check: func(g Gomega, cfg *rest.Config, _ string) {
			g.Expect(cfg.Impersonate.UserName).To(Equal("alice"))
			g.Expect(cfg.Impersonate.Groups).To(Equal([]string{"ops", "dev"}))
		},
	}, {
		name:  "--token",
		args:  []string{"--token", "from-flag"},
		check: func(g Gomega, cfg *rest.Config, _ string) { g.Expect(cfg.BearerToken).To(Equal("from-flag")) },
	}, {
		name:  "--server",
		args:  []string{"--server", "https://three.example:6443"},
		check: func(g Gomega, cfg *rest.Config, _ string) { g.Expect(cfg.Host).To(Equal("https://three.example:6443")) },
	}, {
		name:  "-s",
		args:  []string{"-s", "https://four.example:6443"},
		check: func(g Gomega, cfg *rest.Config, _ string) { g.Expect(cfg.Host).To(Equal("https://four.example:6443")) },
	}, {
		name:  "--insecure-skip-tls-verify",
		args:  []string{"--insecure-skip-tls-verify"},
		check: func(g Gomega, cfg *rest.Config, _ string) { g.Expect(cfg.Insecure).To(BeTrue()) },
	}, {
		name:  "--certificate-authority",
		args:  []string{"--certificate-authority", ca},
		check: func(g Gomega, cfg *rest.Config, _ string) { g.Expect(cfg.CAFile).To(Equal(ca)) },
	}, {
		name:  "--request-timeout",
		args:  []string{"--request-timeout", "5s"},
		check: func(g Gomega, cfg *rest.Config, _ string) { g.Expect(cfg.Timeout).To(Equal(5 * time.Second)) },
	}, {
		name: "--kube-api-qps and --kube-api-burst",
		args: []string{"--kube-api-qps", "7", "--kube-api-burst", "9"},
		check: func(g Gomega, cfg *rest.Config, _ string) {
			g.Expect(cfg.QPS).To(BeNumerically("==", 7))
			g.Expect(cfg.Burst).To(Equal(9))
		},
	}}
	for _, command := range []string{"diff", "preview"} {
		for _, c := range cases {
			t.Run(command+" "+c.name, func(t *testing.T) {
				g := NewWithT(t)
				cluster := newClusterFlags()
				cmd, rest, err := newRoot(Name, cluster, new(int)).Find([]string{command})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(rest).To(BeEmpty())
				g.Expect(cmd.ParseFlags(append([]string{"--kubeconfig", path}, c.args...))).To(Succeed())
				cfg, err := cluster.restConfig()
				g.Expect(err).NotTo(HaveOccurred())
				ns, err := cluster.namespace()
				g.Expect(err).NotTo(HaveOccurred())
				c.check(g, cfg, ns)
			})
		}
	}
}

// TestUsage checks the generated help of each command under each name it
// runs as: its usage line, its examples, and kubectl's flags beside its
// own.
func TestUsage(t *testing.T) {
	cases := []struct {
		name    string // the name it runs as
		command string // "" for the root
		// usage and example begin its usage line and an example.
		usage, example string
		flags          []string // flags its help lists
	}{
		{name: Name, usage: "templatedrift [command]", flags: []string{"--as ", "--token ", "--server "}},
		{name: Name, command: "diff", usage: "templatedrift diff [-n NAMESPACE] (HELMRELEASE | -l SELECTOR | -A)",
			example: "templatedrift diff -n fleet cluster",
			flags:   []string{"-A, --all-namespaces", "-l, --selector", "-o, --output", "--default-service-account", "--as ", "--as-group ", "--token ", "-s, --server ", "-n, --namespace", "--kubeconfig "}},
		{name: Name, command: "preview", usage: "templatedrift preview [-n NAMESPACE] (HELMRELEASE | -l SELECTOR | -A | --kustomization NAME | --path DIR)",
			example: "templatedrift preview -n fleet --set",
			flags:   []string{"-A, --all-namespaces", "--fail-on", "--helmrelease", "--as ", "--token ", "-s, --server ", "--kube-api-qps"}},
		{name: PluginName, usage: "kubectl templatedrift [command]"},
		{name: PluginName, command: "diff", usage: "kubectl templatedrift diff [-n NAMESPACE]", example: "kubectl templatedrift diff -n fleet cluster"},
		{name: PluginName, command: "preview", usage: "kubectl templatedrift preview [-n NAMESPACE]", example: "kubectl templatedrift preview -A -l"},
		{name: api.ControllerName, command: "diff", usage: "template-drift-controller diff [-n NAMESPACE]", example: "template-drift-controller diff -n fleet"},
	}
	for _, c := range cases {
		t.Run(c.name+" "+c.command, func(t *testing.T) {
			g := NewWithT(t)
			args := []string{"--help"}
			if c.command != "" {
				args = []string{c.command, "--help"}
			}
			code, out, errOut := run(c.name, args...)
			g.Expect(code).To(Equal(0), errOut)
			g.Expect(errOut).To(BeEmpty())
			g.Expect(out).To(ContainSubstring("Usage:\n  " + c.usage))
			if c.example != "" {
				g.Expect(out).To(ContainSubstring("Examples:\n"))
				g.Expect(out).To(ContainSubstring("  " + c.example))
			}
			for _, f := range c.flags {
				g.Expect(out).To(ContainSubstring(f))
			}
		})
	}
}

func TestNameOf(t *testing.T) {
	g := NewWithT(t)
	g.Expect(NameOf("/usr/local/bin/kubectl-templatedrift")).To(Equal(PluginName))
	g.Expect(NameOf("kubectl-templatedrift.exe")).To(Equal(PluginName))
	g.Expect(NameOf("kubectl-templatedrift")).To(Equal(PluginName))
	g.Expect(NameOf("./bin/templatedrift")).To(Equal(Name))
	g.Expect(NameOf("templatedrift-linux-amd64")).To(Equal(Name))
}

// TestCommandLineErrors checks the command lines that cannot run: each
// exits 2 with the error and the command's usage on stderr, before it
// reads a kubeconfig.
func TestCommandLineErrors(t *testing.T) {
	cases := []struct {
		args []string
		err  string // what stderr says
	}{
		{args: []string{"nope"}, err: `unknown command "nope" for "templatedrift"`},
		{args: []string{"diff", "--no-such-flag", "x"}, err: "unknown flag: --no-such-flag"},
		{args: []string{"diff"}, err: "name one HelmRelease, or select a fleet with -l or -A"},
		{args: []string{"diff", "a", "b"}, err: "name one HelmRelease, or select a fleet with -l or -A"},
		{args: []string{"diff", "-l", "x=y", "cluster"}, err: "name one HelmRelease, or select a fleet with -l or -A"},
		{args: []string{"diff", "-o", "yaml", "cluster"}, err: `-o "yaml": want text, json or markdown`},
		{args: []string{"preview", "-A", "cluster"}, err: "name one HelmRelease, or select a fleet with -l or -A"},
		{args: []string{"preview", "--fail-on", "always", "cluster"}, err: `--fail-on "always": want failure, rollout or change`},
		{args: []string{"version", "extra"}, err: `unknown command "extra" for "templatedrift version"`},
	}
	for _, c := range cases {
		t.Run(c.err, func(t *testing.T) {
			g := NewWithT(t)
			code, out, errOut := run(Name, append(c.args, "--kubeconfig", "/nonexistent")...)
			g.Expect(code).To(Equal(exitUsage))
			g.Expect(out).To(BeEmpty())
			g.Expect(errOut).To(HavePrefix("error: " + c.err + "\n"))
			g.Expect(errOut).To(ContainSubstring("Usage:\n"))
		})
	}
}

// TestCompletion checks that the completion command writes each shell's
// script for the name the binary runs as.
func TestCompletion(t *testing.T) {
	for _, name := range []string{Name, PluginName} {
		for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
			t.Run(name+" "+shell, func(t *testing.T) {
				g := NewWithT(t)
				code, out, errOut := run(name, "completion", shell)
				g.Expect(code).To(Equal(0), errOut)
				g.Expect(out).To(MatchRegexp(`completion (V2 )?for ` + name + `\s`))
				g.Expect(out).To(ContainSubstring(" __complete "), "it asks the binary")
			})
		}
	}
}

// TestCompleteHelmReleases completes the HELMRELEASE argument of diff and
// preview with the names of the namespace's HelmReleases, read from the
// API server with the kubeconfig flags.
func TestCompleteHelmReleases(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const ns = "complete"
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	for _, name := range []string{"cluster-a", "cluster-b"} {
		g.Expect(env.Client.Create(ctx, testenv.NewHelmRelease(ns, name, nil))).To(Succeed())
	}
	for _, command := range []string{"diff", "preview"} {
		code, out, errOut := run(Name, "__complete", command, "--kubeconfig", env.KubeConfigPath, "-n", ns, "")
		g.Expect(code).To(Equal(0), errOut)
		g.Expect(out).To(HavePrefix("cluster-a\ncluster-b\n:4\n"), "the names, then no file completion")

		code, out, _ = run(Name, "__complete", command, "--kubeconfig", env.KubeConfigPath, "-n", ns, "cluster-a", "")
		g.Expect(code).To(Equal(0))
		g.Expect(out).To(HavePrefix(":4\n"), "one HelmRelease only")
	}
}

// TestVersion prints what the build stamped, as the controller's --version.
func TestVersion(t *testing.T) {
	g := NewWithT(t)
	var want bytes.Buffer
	g.Expect(version.Print(&want)).To(Succeed())
	code, out, _ := run(PluginName, "version")
	g.Expect(code).To(Equal(0))
	g.Expect(out).To(Equal(want.String()))
}
