package chaos

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/test/scale"
)

// The invariants of a scenario run with the real managers. A template
// left Terminating (CAPM3's finalizer holds a deleted data template while
// a claim names it) is the complete invariant's.
const (
	// InvClaimed: the controller never asked to delete a data template
	// that a Metal3DataClaim names (audit log).
	InvClaimed = "claimed"
	// InvAnnouncedRolls: every MachineSet made after the controller
	// started is in a namespace where the controller announced a
	// correction with "rolls machines: yes".
	InvAnnouncedRolls = "announced-rolls"
)

var (
	dataTemplateGVK = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3DataTemplate"}
	claimGVK        = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3DataClaim"}
	machineSetGVK   = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineSet"}
)

// claimedTemplate is the data template every release's Machines claim.
const claimedTemplate = "mgmt-md0-metadata"

// rollsYes is how an event of the controller announces a correction that
// rolls machines.
const rollsYes = "rolls machines: yes"

// adoptTimeout bounds the wait for the managers to hold every data
// template with CAPM3's finalizer and to give every MachineDeployment its
// MachineSet.
const adoptTimeout = 5 * time.Minute

// pokeEvery is how often a data template CAPM3 has not finalized yet is
// given an annotation: CAPM3 does not requeue a template it reconciled
// before its Cluster was in its cache, and waits for the next event.
const pokeEvery = 5 * time.Second

// ManagedFigures are what the managers did in a scenario run with them.
type ManagedFigures struct {
	// Claims are the Metal3DataClaims the harness made, one for each
	// release's data template, as CAPM3 makes one for each Machine.
	Claims int `json:"claims"`
	// Finalized counts the data templates CAPM3 held with its finalizer
	// before the controller started.
	Finalized int `json:"finalized"`
	// DataRotations counts the data templates the controller replaced
	// (the live replacements that name one as the template they replace).
	DataRotations int `json:"dataRotations"`
	// MachineSetsBefore are the MachineSets when the controller started,
	// MachineSetsAfter when the invariants were checked.
	MachineSetsBefore int `json:"machineSetsBefore"`
	MachineSetsAfter  int `json:"machineSetsAfter"`
	// RollsAnnounced counts the controller's events that announced a
	// correction that rolls machines.
	RollsAnnounced int `json:"rollsAnnounced"`
}

// CheckClaimed returns a claimed violation for each delete request of the
// controller (stored or refused) of a data template that a claim names;
// claimed maps each claimed template to the claim naming it.
func CheckClaimed(writes []Write, claimed map[ObjectKey]string) []Violation {
	var out []Violation
	for _, w := range writes {
		if w.Verb != "delete" || w.ObjectRef.Resource != "metal3datatemplates" {
			continue
		}
		k := ObjectKey{Namespace: w.ObjectRef.Namespace, Kind: dataTemplateGVK.Kind, Name: w.ObjectRef.Name}
		if claim, ok := claimed[k]; ok {
			out = append(out, Violation{InvClaimed, fmt.Sprintf("%s while Metal3DataClaim %s names it", w, claim)})
		}
	}
	return out
}

// CheckRolls returns an announced-rolls violation for each MachineSet of
// now that is not in before, in a namespace where no event of the
// controller announced a correction that rolls machines.
func CheckRolls(before map[ObjectKey]bool, now []ObjectKey, announced map[string]bool) []Violation {
	var out []Violation
	for _, k := range now {
		if !before[k] && !announced[k.Namespace] {
			out = append(out, Violation{InvAnnouncedRolls, fmt.Sprintf("%s was made after the controller started, and no event of the controller in %s said %q", k, k.Namespace, rollsYes)})
		}
	}
	return out
}

// managed is what the real managers hold in a world: the claimed data
// templates, with the claim naming each, and the MachineSets when the
// controller started.
type managed struct {
	claimed     map[ObjectKey]string
	machineSets map[ObjectKey]bool
	fig         *ManagedFigures
}

// adopt claims every release's data template and waits until the managers
// hold the fleet.
func adopt(ctx context.Context, w *world) (*managed, error) {
	m := &managed{claimed: map[ObjectKey]string{}, machineSets: map[ObjectKey]bool{}, fig: &ManagedFigures{}}
	w.res.Managed = m.fig
	if err := m.createClaims(ctx, w); err != nil {
		return nil, err
	}
	return m, m.waitAdopted(ctx, w)
}

// createClaims gives every release's data template a Metal3DataClaim, as
// CAPM3 makes one for each Machine whose host is associated (there are no
// hosts here), and records them in the fleet.
func (m *managed) createClaims(ctx context.Context, r *world) error {
	for i := range r.in.N {
		ns := scale.Namespace(i)
		claim := &unstructured.Unstructured{}
		claim.SetGroupVersionKind(claimGVK)
		claim.SetNamespace(ns)
		claim.SetName("mgmt-md0-0")
		claim.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": "mgmt"})
		_ = unstructured.SetNestedField(claim.Object, claimedTemplate, "spec", "template", "name")
		if err := r.env.Client.Create(ctx, claim); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("failed to create Metal3DataClaim %s/%s: %w", ns, claim.GetName(), err)
		}
		m.claimed[ObjectKey{Namespace: ns, Kind: dataTemplateGVK.Kind, Name: claimedTemplate}] = ns + "/" + claim.GetName()
	}
	m.fig.Claims = len(m.claimed)
	return nil
}

// waitAdopted waits until CAPM3 holds every data template with its
// finalizer and every MachineDeployment has a MachineSet, and records the
// MachineSets: without them the managers' invariants prove nothing.
func (m *managed) waitAdopted(ctx context.Context, r *world) error {
	var pending string
	poked := time.Time{}
	pokes := 0
	err := wait.PollUntilContextTimeout(ctx, time.Second, adoptTimeout, true, func(ctx context.Context) (bool, error) {
		templates, err := listAll(ctx, r.env.Client, dataTemplateGVK)
		if err != nil {
			return false, err
		}
		var bare []*unstructured.Unstructured
		for i := range templates {
			if len(templates[i].GetFinalizers()) == 0 {
				bare = append(bare, &templates[i])
			}
		}
		sets, err := listAll(ctx, r.env.Client, machineSetGVK)
		if err != nil {
			return false, err
		}
		withSet := map[string]bool{}
		for _, s := range sets {
			withSet[s.GetNamespace()] = true
		}
		var noSet []string
		for i := range r.in.N {
			if ns := scale.Namespace(i); !withSet[ns] {
				noSet = append(noSet, ns)
			}
		}
		pending = fmt.Sprintf("%d of %d data templates without CAPM3's finalizer, %d MachineDeployments without a MachineSet (%s)",
			len(bare), len(templates), len(noSet), strings.Join(noSet[:min(3, len(noSet))], ", "))
		if len(bare) == 0 && len(noSet) == 0 {
			m.fig.Finalized = len(templates)
			for _, s := range sets {
				m.machineSets[keyOf(&s)] = true
			}
			m.fig.MachineSetsBefore = len(sets)
			return true, nil
		}
		if time.Since(poked) >= pokeEvery {
			pokes++
			for _, u := range bare {
				if err := poke(ctx, r.env.Client, u, pokes); err != nil {
					return false, err
				}
			}
			poked = time.Now()
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("the managers did not adopt the fleet in %s (%s): %w", adoptTimeout, pending, err)
	}
	r.in.Logf("%s: the managers hold %d data templates with CAPM3's finalizer and made %d MachineSets", r.name, m.fig.Finalized, m.fig.MachineSetsBefore)
	return nil
}

// poke writes an annotation on u, as any other writer might, to give
// CAPM3 an event for it.
func poke(ctx context.Context, c client.Client, u *unstructured.Unstructured, n int) error {
	base := u.DeepCopy()
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["chaos.templatedrift.io/poke"] = strconv.Itoa(n)
	u.SetAnnotations(ann)
	if err := c.Patch(ctx, u, client.MergeFrom(base)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to annotate %s/%s for CAPM3: %w", u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// listAll lists gvk in every namespace.
func listAll(ctx context.Context, c client.Client, gvk schema.GroupVersionKind) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, l); err != nil {
		return nil, fmt.Errorf("failed to list %s: %w", gvk.Kind, err)
	}
	return l.Items, nil
}

// check checks the managers' invariants: no claimed data template
// deleted (audit log), no MachineSet made that the controller did not
// announce (live MachineSets and the controller's events); the claims
// must still be there, or the check proves nothing.
func (m *managed) check(ctx context.Context, r *world, writes []Write) error {
	r.res.Checked = append(r.res.Checked, InvClaimed, InvAnnouncedRolls)
	claims, err := listAll(ctx, r.env.Client, claimGVK)
	if err != nil {
		return err
	}
	if len(claims) != len(m.claimed) {
		return fmt.Errorf("found %d Metal3DataClaims, the harness made %d", len(claims), len(m.claimed))
	}
	for _, v := range CheckClaimed(writes, m.claimed) {
		r.res.violate(v.Invariant, v.What)
	}
	templates, err := listAll(ctx, r.env.Client, dataTemplateGVK)
	if err != nil {
		return err
	}
	for _, t := range templates {
		if t.GetAnnotations()[api.ReplacesAnnotation] != "" {
			m.fig.DataRotations++
		}
	}
	sets, err := listAll(ctx, r.env.Client, machineSetGVK)
	if err != nil {
		return err
	}
	now := make([]ObjectKey, 0, len(sets))
	for _, s := range sets {
		now = append(now, keyOf(&s))
	}
	slices.SortFunc(now, func(a, b ObjectKey) int { return strings.Compare(a.String(), b.String()) })
	m.fig.MachineSetsAfter = len(sets)
	var events corev1.EventList
	if err := r.env.Client.List(ctx, &events); err != nil {
		return fmt.Errorf("failed to list events: %w", err)
	}
	announced := map[string]bool{}
	for _, e := range events.Items {
		if fromController(e) && strings.Contains(e.Message, rollsYes) {
			announced[e.Namespace] = true
			m.fig.RollsAnnounced++
		}
	}
	for _, v := range CheckRolls(m.machineSets, now, announced) {
		r.res.violate(v.Invariant, v.What)
	}
	return nil
}

// fromController reports whether the controller recorded e.
func fromController(e corev1.Event) bool {
	return e.Source.Component == api.ControllerName || e.ReportingController == api.ControllerName
}

// printManaged writes a line for each scenario run with the managers:
// what they held and made, so a reader sees the invariants had something
// to check.
func printManaged(w io.Writer, results []Result) {
	for _, r := range results {
		if m := r.Managed; m != nil {
			fmt.Fprintf(w, "\n%s (real managers): %d Metal3DataClaims, %d data templates held by CAPM3's finalizer, %d data templates rotated; MachineSets %d when the controller started, %d at the end; %d events announced %q\n",
				r.Scenario, m.Claims, m.Finalized, m.DataRotations, m.MachineSetsBefore, m.MachineSetsAfter, m.RollsAnnounced, rollsYes)
		}
	}
}
