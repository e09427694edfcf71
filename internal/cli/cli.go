package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/templatedrift/template-drift-controller/internal/diffreport"
	"github.com/templatedrift/template-drift-controller/internal/version"
)

// The names the command runs under.
const (
	// Name is the command's name, and its binary's.
	Name = "templatedrift"
	// PluginName is the binary's name as a kubectl plugin: kubectl runs it
	// for `kubectl templatedrift`.
	PluginName = "kubectl-" + Name
)

// exitUsage is the exit code of a command line that cannot run (an unknown
// command or flag, a bad value, a wrong number of HelmReleases): diff's and
// preview's exit code of an error.
const exitUsage = diffreport.ExitError

// NameOf is the name to run as, from argv[0]: PluginName when kubectl runs
// the binary as its plugin, else Name.
func NameOf(argv0 string) string {
	if strings.TrimSuffix(filepath.Base(argv0), ".exe") == PluginName {
		return PluginName
	}
	return Name
}

// Execute runs the command line args as the command name (Name,
// PluginName, or the controller binary's name for its deprecated
// subcommands) and returns the process exit code: the command's own, 0
// after help, exitUsage for a command line that cannot run. stdin is what
// `--helmrelease -` reads.
func Execute(name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// The commands print what they find; the pipeline's and the client's
	// logs are the controller's, not theirs.
	ctrllog.SetLogger(logr.Discard())
	code := 0
	root := newRoot(name, newClusterFlags(), &code)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Only the command line fails here: diff and preview report their own
	// errors and set code.
	if cmd, err := root.ExecuteC(); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		fmt.Fprint(stderr, cmd.UsageString())
		return exitUsage
	}
	return code
}

// newRoot is the command tree, with cluster's flags for every command;
// each command sets *code. A plugin's usage reads as kubectl runs it
// (`kubectl templatedrift diff`), while its completion scripts complete the
// binary's own name.
func newRoot(name string, cluster *clusterFlags, code *int) *cobra.Command {
	root := &cobra.Command{
		Use:   name,
		Short: "Show the drift of Cluster API templates and preview Helm upgrades, writing nothing",
		Long: `Looks at the Cluster API templates of Flux HelmReleases and writes nothing:
diff compares a release's templates with the live ones through the
template-drift-controller's own pipeline, and preview says what the Helm
upgrade of a change would do before it merges. It reads the kubeconfig as
kubectl does, with kubectl's flags. Installed as kubectl-templatedrift on the
PATH, it is also the kubectl plugin "kubectl templatedrift".`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	if plugin, ok := strings.CutPrefix(name, "kubectl-"); ok {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl " + plugin}
	}
	cluster.bind(root.PersistentFlags())
	root.AddCommand(newDiff(root.DisplayName(), cluster, code), newPreview(root.DisplayName(), cluster, code), newVersion(code))
	return root
}

// newVersion prints what the build stamped, as the controller's --version.
func newVersion(code *int) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, commit date and Go toolchain",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			if err := version.Print(cmd.OutOrStdout()); err != nil {
				*code = 1
			}
		},
	}
}
