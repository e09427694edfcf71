package chaos

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

// The tenants scenario's own invariants.
const (
	// InvRefused: every hostile release gets its clear reason (never
	// TemplatesInSync=True), and nothing is stored in its namespace or as
	// its account but the controller's own HelmRelease status and events.
	InvRefused = "refused"
	// InvIdentity: no Secret request and no read or write of a target
	// object used the controller's own identity (only the watches' list
	// and watch of the template and consumer kinds do, for notification),
	// and no request as one tenant's account read or wrote another's
	// namespace (audit log).
	InvIdentity = "identity"
)

// expectation is what a hostile release's condition must say.
type expectation struct {
	// Attack is what the release tries, for the matrix.
	Attack string
	// Reason is the TemplatesInSync reason it must get, and Contains
	// substrings of its message.
	Reason   string
	Contains []string
}

// The hostile tenants' namespaces. victimRelease is the release whose
// objects the hostile-owner tenant's manifest claims.
const (
	nsCrossNamespace = "hostile-crossns"
	nsOtherRelease   = "hostile-owner"
	nsConfigMapRef   = "hostile-configmap"
	nsUnreadable     = "hostile-secret"
	nsFileRefs       = "hostile-files"
	victimRelease    = "victim"
)

// hostileRelease is one release the tenants scenario adds to the fleet.
type hostileRelease struct {
	ns string
	// live are the objects in ns (none when empty), created as owned by
	// liveOwner; manifest is the stored release's.
	live, liveOwner, manifest string
	// secrets are Secrets to create in ns, and readable the release
	// Secrets the tenant's account may read (all when nil).
	secrets  map[string][]byte
	readable []string
	// mutate edits the HelmRelease before it is created.
	mutate func(*helmv2.HelmRelease)
	want   expectation
}

// hostileReleases are the tenants scenario's attacks: a template in
// another namespace, another release's template, a kubeconfig Secret its
// account may not read (secretRef has no namespace field, so this is the
// way out of its rights it has), a configMapRef, and a kubeconfig that
// names the controller's own credential files. The fleet's first
// namespace is the victim of the first.
func (t *tenants) hostileReleases() ([]hostileRelease, error) {
	boot, mgmt := scale.FleetManifest(testenv.Bootstrap), scale.FleetManifest(testenv.Management)
	evil := testenv.Management
	evil.ImageURL = "http://203.0.113.66/images/evil.qcow2"
	account := func(ns string) string { return "system:serviceaccount:" + ns + ":" + scale.TenantAccount }
	own, err := os.ReadFile(t.w.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("failed to read the controller's kubeconfig: %w", err)
	}
	files, err := fileKubeconfig(own, t.w.in.Dir)
	if err != nil {
		return nil, err
	}
	return []hostileRelease{{
		ns: nsCrossNamespace, manifest: placeIn(mgmt, scale.Namespace(0)),
		want: expectation{Attack: "templates placed in another tenant's namespace", Reason: api.AccessDeniedReason,
			Contains: []string{account(nsCrossNamespace), "forbidden"}},
	}, {
		ns: nsOtherRelease, live: mgmt, liveOwner: victimRelease, manifest: scale.FleetManifest(evil),
		want: expectation{Attack: "templates and consumers of another release", Reason: api.OwnershipConflictReason,
			Contains: []string{"owned by release " + nsOtherRelease + "/" + victimRelease}},
	}, {
		ns: nsConfigMapRef, live: boot, liveOwner: releaseName, manifest: mgmt,
		mutate: func(hr *helmv2.HelmRelease) {
			hr.Spec.KubeConfig = &meta.KubeConfigReference{ConfigMapRef: &meta.LocalObjectReference{Name: "workload-identity"}}
		},
		want: expectation{Attack: "spec.kubeConfig.configMapRef", Reason: api.InvalidConfigurationReason, Contains: []string{"configMapRef"}},
	}, {
		ns: nsUnreadable, live: boot, liveOwner: releaseName, manifest: mgmt,
		secrets: map[string][]byte{"admin-kubeconfig": own}, readable: []string{release.SecretName(releaseName, 1)},
		mutate: func(hr *helmv2.HelmRelease) {
			hr.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: "admin-kubeconfig"}}
		},
		want: expectation{Attack: "a kubeconfig Secret its account may not read (the controller's own)", Reason: api.ReleaseUnavailableReason,
			Contains: []string{"admin-kubeconfig", account(nsUnreadable), "forbidden"}},
	}, {
		ns: nsFileRefs, live: boot, liveOwner: releaseName, manifest: mgmt,
		secrets: map[string][]byte{"file-kubeconfig": files},
		mutate: func(hr *helmv2.HelmRelease) {
			hr.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: "file-kubeconfig"}}
		},
		want: expectation{Attack: "a kubeconfig naming the controller's credential files", Reason: api.ReleaseUnavailableReason,
			Contains: []string{"file-kubeconfig", "client-certificate file"}},
	}}, nil
}

// TenantsSpec runs the controller under the multi-tenancy lockdown (the
// chart's role alone, --default-service-account) with hostile tenants'
// releases among the fleet from the start. Besides every scenario's
// invariants, each hostile release must get its clear reason (refused),
// and every request must use the right identity (identity).
func TenantsSpec(ctx context.Context, in Input) (res Result, err error) {
	t := &tenants{extras: map[string]expectation{}}
	w := newWorld(in, ScenarioTenants, worldOptions{lockdown: true, accept: func(hr *helmv2.HelmRelease, c *metav1.Condition) bool {
		want, ok := t.extras[hr.Namespace+"/"+hr.Name]
		return ok && want.met(c) == ""
	}})
	t.w = w
	defer func() { w.stop(err) }()
	if err := w.setUp(ctx, t.create); err != nil {
		return w.res, err
	}
	hostile := 0
	for _, e := range t.extras {
		if e.Reason != api.NoDriftDetectedReason {
			hostile++
		}
	}
	w.res.Fault = fmt.Sprintf("lockdown (the chart's role, --default-service-account), %d hostile releases", hostile)
	// The hostile releases are there from the start: the controller only
	// runs while the fleet converges.
	w.faultsStopped(ctx)
	return w.conclude(ctx, checks{statusOf: sortedKeys(t.extras)}, func([]Write) error { return t.check(ctx) })
}

// tenants are the tenants scenario's hostile releases (and the victim),
// by namespace/name, with what their condition must say.
type tenants struct {
	w      *world
	extras map[string]expectation
}

// releaseName is the fleet's HelmRelease and Helm release name.
const releaseName = "cluster"

// placeIn puts every document of manifest in namespace ns.
func placeIn(manifest, ns string) string {
	docs := strings.Split(manifest, "\n---\n")
	for i, d := range docs {
		docs[i] = strings.Replace(d, "metadata:\n", "metadata:\n  namespace: "+ns+"\n", 1)
	}
	return strings.Join(docs, "\n---\n")
}

// fileKubeconfig writes the controller's client certificate and key to
// files in the run's directory, as a pod's mounted credentials are, and
// returns a kubeconfig of the same server that names those files.
func fileKubeconfig(own []byte, dir string) ([]byte, error) {
	cfg, err := clientcmd.Load(own)
	if err != nil {
		return nil, fmt.Errorf("failed to parse the controller's kubeconfig: %w", err)
	}
	for name, u := range cfg.AuthInfos {
		cert, key := filepath.Join(dir, "controller.crt"), filepath.Join(dir, "controller.key")
		if err := os.WriteFile(cert, u.ClientCertificateData, 0o600); err != nil {
			return nil, err
		}
		if err := os.WriteFile(key, u.ClientKeyData, 0o600); err != nil {
			return nil, err
		}
		u.ClientCertificateData, u.ClientKeyData, u.ClientCertificate, u.ClientKey = nil, nil, cert, key
		cfg.AuthInfos[name] = u
	}
	return clientcmd.Write(*cfg)
}

// create gives every release of the fleet the tenant account the lockdown
// impersonates, and adds the hostile releases.
func (t *tenants) create(ctx context.Context) error {
	c := t.w.env.Client
	for i := range t.w.in.N {
		if err := testenv.GrantTenant(ctx, c, scale.Namespace(i), scale.TenantAccount, testenv.TenantRules()); err != nil {
			return err
		}
	}
	hostile, err := t.hostileReleases()
	if err != nil {
		return err
	}
	for _, h := range hostile {
		if err := t.createHostile(ctx, h); err != nil {
			return err
		}
		t.extras[h.ns+"/"+releaseName] = h.want
	}
	t.w.added = len(t.extras)
	return nil
}

// createHostile creates a hostile release: its namespace and account, its
// live objects and Secrets, the victim release of the other-release case,
// its HelmRelease and its stored release.
func (t *tenants) createHostile(ctx context.Context, h hostileRelease) error {
	c := t.w.env.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: h.ns}}); err != nil {
		return fmt.Errorf("failed to create namespace %s: %w", h.ns, err)
	}
	if err := testenv.GrantTenant(ctx, c, h.ns, scale.TenantAccount, testenv.TenantRules(h.readable...)); err != nil {
		return err
	}
	for name, kc := range h.secrets {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.ns}, Data: map[string][]byte{"value": kc}}
		if err := c.Create(ctx, s); err != nil {
			return fmt.Errorf("failed to create Secret %s/%s: %w", h.ns, name, err)
		}
	}
	if h.live != "" {
		if err := testenv.CreateLive(ctx, c, h.ns, h.liveOwner, h.live, nil); err != nil {
			return fmt.Errorf("failed to create the live objects of %s: %w", h.ns, err)
		}
	}
	if h.liveOwner == victimRelease {
		// The victim: the release that owns the objects, in sync.
		if err := t.storeRelease(ctx, h.ns, victimRelease, h.live, nil); err != nil {
			return err
		}
		t.extras[h.ns+"/"+victimRelease] = expectation{Attack: "(the victim)", Reason: api.NoDriftDetectedReason}
	}
	return t.storeRelease(ctx, h.ns, releaseName, h.manifest, h.mutate)
}

// storeRelease creates an opted-in HelmRelease name in ns (edited by
// mutate) and the revision 1 Helm stored for it, with manifest, applied
// client-side.
func (t *tenants) storeRelease(ctx context.Context, ns, name, manifest string, mutate func(*helmv2.HelmRelease)) error {
	hr := testenv.NewHelmRelease(ns, name, map[string]string{api.ModeAnnotation: api.ModeEnabled})
	hr.Spec.Interval = metav1.Duration{Duration: resync}
	if mutate != nil {
		mutate(hr)
	}
	if err := t.w.env.Client.Create(ctx, hr); err != nil {
		return fmt.Errorf("failed to create HelmRelease %s/%s: %w", ns, name, err)
	}
	rel := testenv.Release{Name: name, Namespace: ns, Version: 1, Status: "deployed", ApplyMethod: "csa", Manifest: manifest}
	if err := testenv.StoreRelease(ctx, t.w.env, rel); err != nil {
		return fmt.Errorf("failed to store the release of %s/%s: %w", ns, name, err)
	}
	if err := testenv.SetHistory(ctx, t.w.env.Client, hr, rel); err != nil {
		return fmt.Errorf("failed to record the release history of %s/%s: %w", ns, name, err)
	}
	return nil
}

// met says how c falls short of e, or "".
func (e expectation) met(c *metav1.Condition) string {
	switch {
	case c == nil:
		return "no TemplatesInSync condition"
	case c.Reason != e.Reason:
		return fmt.Sprintf("reason %s (%s), want %s", c.Reason, c.Message, e.Reason)
	case e.Reason != api.NoDriftDetectedReason && c.Status == metav1.ConditionTrue:
		return "TemplatesInSync=True"
	}
	for _, s := range e.Contains {
		if !strings.Contains(c.Message, s) {
			return fmt.Sprintf("message %q does not say %q", c.Message, s)
		}
	}
	return ""
}

// TenantFigures are the tenants scenario's: the controller's requests by
// the identity they used, and each hostile release's condition.
type TenantFigures struct {
	Identity IdentityCounts   `json:"identity"`
	Hostile  []HostileOutcome `json:"hostile"`
}

// HostileOutcome is one hostile release's condition at the end of the
// tenants scenario.
type HostileOutcome struct {
	Release string `json:"release"`
	Attack  string `json:"attack"`
	Reason  string `json:"reason"`
	// Held is true when the condition says what it must.
	Held bool `json:"held"`
}

// printTenants writes, under the matrix, what each hostile release of a
// tenants scenario got, and whose identity the controller's requests used.
func printTenants(w io.Writer, results []Result) {
	for _, r := range results {
		t := r.Tenants
		if t == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s: as itself %d requests for its own resources and %d lists and watches of target kinds (notification); as tenants %d requests, %d refused, %d reviews (%d allowing a list)\n",
			r.Scenario, t.Identity.Own, t.Identity.Watches, t.Identity.Impersonated, t.Identity.Refused, t.Identity.Reviews, t.Identity.Allowed)
		for _, h := range t.Hostile {
			held := "held"
			if !h.Held {
				held = "NOT HELD"
			}
			fmt.Fprintf(w, "%s: %s: %s -> %s (%s)\n", r.Scenario, h.Release, h.Attack, h.Reason, held)
		}
	}
}

// checkTenants checks the hostile releases' conditions, and from the audit
// log whose identity every request used.
func (t *tenants) check(ctx context.Context) error {
	w := t.w
	w.res.Checked = append(w.res.Checked, InvRefused, InvIdentity)
	fig := &TenantFigures{}
	w.res.Tenants = fig
	for _, key := range sortedKeys(t.extras) {
		want := t.extras[key]
		ns, name, _ := strings.Cut(key, "/")
		hr := &helmv2.HelmRelease{}
		if err := w.env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, hr); err != nil {
			return fmt.Errorf("failed to read HelmRelease %s: %w", key, err)
		}
		c := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition)
		out := HostileOutcome{Release: key, Attack: want.Attack}
		if c != nil {
			out.Reason = c.Reason
		}
		if why := want.met(c); why != "" {
			w.res.violate(InvRefused, fmt.Sprintf("%s (%s): %s", key, want.Attack, why))
		} else {
			out.Held = true
		}
		fig.Hostile = append(fig.Hostile, out)
	}
	reqs, err := ReadRequests(w.auditLog, ControllerUser)
	if err != nil {
		return err
	}
	hostile := map[string]bool{}
	for key := range t.extras {
		ns, _, _ := strings.Cut(key, "/")
		hostile[ns] = true
	}
	id := CheckIdentity(reqs, hostile)
	fig.Identity = id.Counts
	for _, v := range id.Violations {
		w.res.violate(v.Invariant, v.What)
	}
	return nil
}
