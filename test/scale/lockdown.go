package scale

import (
	"bufio"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// TenantAccount is the service account a controller under the lockdown
// impersonates for every HelmRelease that names none
// (--default-service-account, the chart's defaultServiceAccount), in the
// benchmark's lockdown variant and the chaos matrix's tenants scenario.
const TenantAccount = "tenant"

// lockdownRoleName names the chart's lockdown ClusterRole and its binding
// to the controller user.
const lockdownRoleName = "template-drift-controller-lockdown"

// LockdownRole renders the chart at root with defaultServiceAccount set, as
// a user who turns the lockdown on would install it, and returns its
// ClusterRole: the controller's whole identity under the lockdown, so that
// the benchmark and the matrix run the role the chart ships, not a copy of
// it.
func LockdownRole(root string) (*rbacv1.ClusterRole, error) {
	ch, err := loader.LoadDir(filepath.Join(root, "charts", "template-drift-controller"))
	if err != nil {
		return nil, fmt.Errorf("failed to load the chart: %w", err)
	}
	vals := map[string]any{"defaultServiceAccount": TenantAccount}
	top, err := chartutil.ToRenderValues(ch, vals, common.ReleaseOptions{Name: "template-drift-controller", Namespace: "flux-system", Revision: 1, IsInstall: true},
		common.DefaultCapabilities.Copy())
	if err != nil {
		return nil, fmt.Errorf("failed to build the chart's values: %w", err)
	}
	files, err := engine.Render(ch, top)
	if err != nil {
		return nil, fmt.Errorf("failed to render the chart: %w", err)
	}
	var roles []*rbacv1.ClusterRole
	for _, doc := range splitDocs(files) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil || meta.Kind != "ClusterRole" {
			continue
		}
		role := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal([]byte(doc), role); err != nil {
			return nil, fmt.Errorf("failed to parse the chart's ClusterRole: %w", err)
		}
		roles = append(roles, role)
	}
	if len(roles) != 1 {
		return nil, fmt.Errorf("the chart rendered %d ClusterRoles with defaultServiceAccount set, want 1", len(roles))
	}
	return roles[0], nil
}

// splitDocs splits rendered templates into YAML documents.
func splitDocs(files map[string]string) []string {
	var out []string
	for _, f := range files {
		r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(f)))
		for {
			doc, err := r.Read()
			if err != nil {
				break // io.EOF, or a template the API server would refuse anyway
			}
			out = append(out, string(doc))
		}
	}
	return out
}

// BindLockdownRole creates the chart's lockdown ClusterRole on e and binds
// it to user, the controller's.
func BindLockdownRole(ctx context.Context, e *testenv.Env, user string) error {
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	role, err := LockdownRole(root)
	if err != nil {
		return err
	}
	role.ObjectMeta = metav1.ObjectMeta{Name: lockdownRoleName}
	if err := e.Client.Create(ctx, role); err != nil {
		return fmt.Errorf("failed to create the lockdown ClusterRole: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: lockdownRoleName},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: lockdownRoleName},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	if err := e.Client.Create(ctx, binding); err != nil {
		return fmt.Errorf("failed to bind the lockdown ClusterRole: %w", err)
	}
	return nil
}
