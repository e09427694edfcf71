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
func (r *run) hostileReleases() ([]hostileRelease, error) {
	boot, mgmt := scale.FleetManifest(testenv.Bootstrap), scale.FleetManifest(testenv.Management)
	evil := testenv.Management
	evil.ImageURL = "http://203.0.113.66/images/evil.qcow2"
	account := func(ns string) string { return "system:serviceaccount:" + ns + ":" + scale.TenantAccount }
	own, err := os.ReadFile(r.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("failed to read the controller's kubeconfig: %w", err)
	}
	files, err := r.fileKubeconfig(own)
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
func (r *run) fileKubeconfig(own []byte) ([]byte, error) {
	cfg, err := clientcmd.Load(own)
	if err != nil {
		return nil, fmt.Errorf("failed to parse the controller's kubeconfig: %w", err)
	}
	for name, u := range cfg.AuthInfos {
		cert, key := filepath.Join(r.dir, "controller.crt"), filepath.Join(r.dir, "controller.key")
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

// createTenants gives every release of the fleet the tenant account the
// lockdown impersonates, and adds the hostile releases.
func (r *run) createTenants(ctx context.Context) error {
	c := r.env.Client
	for i := range r.cfg.N {
		if err := testenv.GrantTenant(ctx, c, scale.Namespace(i), scale.TenantAccount, testenv.TenantRules()); err != nil {
			return err
		}
	}
	hostile, err := r.hostileReleases()
	if err != nil {
		return err
	}
	r.extras = map[string]expectation{}
	for _, h := range hostile {
		if err := r.createHostile(ctx, h); err != nil {
			return err
		}
		r.extras[h.ns+"/"+releaseName] = h.want
	}
	r.added = len(r.extras)
	r.accept = func(hr *helmv2.HelmRelease, c *metav1.Condition) bool {
		want, ok := r.extras[hr.Namespace+"/"+hr.Name]
		return ok && want.met(c) == ""
	}
	return nil
}

// createHostile creates a hostile release: its namespace and account, its
// live objects and Secrets, the victim release of the other-release case,
// its HelmRelease and its stored release.
func (r *run) createHostile(ctx context.Context, h hostileRelease) error {
	c := r.env.Client
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
		if err := r.storeRelease(ctx, h.ns, victimRelease, h.live, nil); err != nil {
			return err
		}
		r.extras[h.ns+"/"+victimRelease] = expectation{Attack: "(the victim)", Reason: api.NoDriftDetectedReason}
	}
	return r.storeRelease(ctx, h.ns, releaseName, h.manifest, h.mutate)
}

// storeRelease creates an opted-in HelmRelease name in ns (edited by
// mutate) and the revision 1 Helm stored for it, with manifest, applied
// client-side.
func (r *run) storeRelease(ctx context.Context, ns, name, manifest string, mutate func(*helmv2.HelmRelease)) error {
	hr := testenv.NewHelmRelease(ns, name, map[string]string{api.ModeAnnotation: api.ModeEnabled})
	hr.Spec.Interval = metav1.Duration{Duration: r.cfg.Resync}
	if mutate != nil {
		mutate(hr)
	}
	if err := r.env.Client.Create(ctx, hr); err != nil {
		return fmt.Errorf("failed to create HelmRelease %s/%s: %w", ns, name, err)
	}
	rel := testenv.Release{Name: name, Namespace: ns, Version: 1, Status: "deployed", ApplyMethod: "csa", Manifest: manifest}
	if err := testenv.StoreRelease(ctx, r.env, rel); err != nil {
		return fmt.Errorf("failed to store the release of %s/%s: %w", ns, name, err)
	}
	if err := testenv.SetHistory(ctx, r.env.Client, hr, rel); err != nil {
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

// tenants is the scenario's fault: the hostile releases are there from
// the start, so the controller only runs while the fleet converges.
func (r *run) tenants(context.Context) error {
	hostile := 0
	for _, e := range r.extras {
		if e.Reason != api.NoDriftDetectedReason {
			hostile++
		}
	}
	r.res.Fault = fmt.Sprintf("lockdown (the chart's role, --default-service-account), %d hostile releases", hostile)
	return nil
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
		if r.Identity == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s: as itself %d requests for its own resources and %d lists and watches of target kinds (notification); as tenants %d requests, %d refused, %d reviews (%d allowing a list)\n",
			r.Scenario, r.Identity.Own, r.Identity.Watches, r.Identity.Impersonated, r.Identity.Refused, r.Identity.Reviews, r.Identity.Allowed)
		for _, h := range r.Hostile {
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
func (r *run) checkTenants(ctx context.Context) error {
	r.res.Checked = append(r.res.Checked, InvRefused, InvIdentity)
	for _, key := range sortedKeys(r.extras) {
		want := r.extras[key]
		ns, name, _ := strings.Cut(key, "/")
		hr := &helmv2.HelmRelease{}
		if err := r.env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, hr); err != nil {
			return fmt.Errorf("failed to read HelmRelease %s: %w", key, err)
		}
		c := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition)
		out := HostileOutcome{Release: key, Attack: want.Attack}
		if c != nil {
			out.Reason = c.Reason
		}
		if why := want.met(c); why != "" {
			r.res.violate(InvRefused, fmt.Sprintf("%s (%s): %s", key, want.Attack, why))
		} else {
			out.Held = true
		}
		r.res.Hostile = append(r.res.Hostile, out)
	}
	reqs, err := ReadRequests(r.auditLog, ControllerUser)
	if err != nil {
		return err
	}
	hostile := map[string]bool{}
	for key := range r.extras {
		ns, _, _ := strings.Cut(key, "/")
		hostile[ns] = true
	}
	id := CheckIdentity(reqs, hostile)
	r.res.Identity = &id.Counts
	for _, v := range id.Violations {
		r.res.violate(v.Invariant, v.What)
	}
	return nil
}
