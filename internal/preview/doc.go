// Package preview predicts what the Helm upgrade of a HelmRelease would do,
// before the change merges: it renders the proposed chart and values as
// helm-controller would (internal/render), asks the target's API server
// what it would do to each object with dry-runs only (predict.go), and
// says what each answer means with the rules of internal/plan (a refusal
// fails the upgrade; Rollout says whether a MachineDeployment or a
// KubeadmControlPlane rolls). report.go formats the prediction as text,
// JSON or markdown and gives the command's exit code.
package preview
