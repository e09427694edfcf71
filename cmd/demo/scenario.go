package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"text/tabwriter"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/diffreport"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
	"github.com/templatedrift/template-drift-controller/internal/pipeline"
	"github.com/templatedrift/template-drift-controller/internal/release"
	"github.com/templatedrift/template-drift-controller/internal/target"
	"github.com/templatedrift/template-drift-controller/internal/testenv"
)

// scenario is one act of the demo.
type scenario struct {
	title, story string
	pivot        testenv.Pivot
}

var scenarios = []scenario{
	{
		title: "1/2 After the pivot: Metal3MachineTemplates name the dead bootstrap image server again",
		// Helm 4's adopting install patches mutable templates itself (make
		// e2e measures it); the drift this scenario writes is the kind that
		// arrives after the install and that client-side-apply upgrades
		// leave alone.
		story: "The demo writes this state itself: the stored release (client-side apply) names the management image server,\n" +
			"the live templates the bootstrap one, as a restore of the pre-pivot objects after the install leaves them.\n" +
			"A client-side-apply upgrade that does not change these templates leaves the drift; a rolling upgrade would\n" +
			"now fail to download the OS image.",
		pivot: testenv.Pivot{Namespace: "fleet", Live: testenv.Bootstrap, Release: testenv.Management, ApplyMethod: "csa"},
	},
	{
		title: "2/2 A locked template: Metal3DataTemplate metaData still carries the bootstrap IP",
		story: "CAPM3 refuses any change to metaData, so the template is rotated: a hash-named copy, its Metal3MachineTemplate repointed in place.",
		pivot: testenv.Pivot{Namespace: "fleet-locked", ApplyMethod: "csa",
			Live:    testenv.ChartValues{ImageURL: testenv.Management.ImageURL, MetadataIP: "10.10.10.17", CPKind: "Metal3MachineTemplate"},
			Release: testenv.ChartValues{ImageURL: testenv.Management.ImageURL, MetadataIP: "192.168.100.2", CPKind: "Metal3MachineTemplate"}},
	},
}

func (s scenario) run(ctx context.Context, env *testenv.Env) error {
	heading(s.title)
	fmt.Println(s.story)
	hr, err := s.pivot.Install(ctx, env)
	if err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(hr)
	setsBefore, err := machineSets(ctx, env, key.Namespace, demoDeployment, true)
	if err != nil {
		return err
	}
	before, err := diff(ctx, env, key)
	if err != nil {
		return err
	}
	fmt.Printf("\nHelmRelease %s, stored release %s. Live templates against the release manifest (what auto will do):\n\n", key, before.Release)
	if err := before.WriteTable(os.Stdout); err != nil {
		return err
	}

	fmt.Printf("\n$ kubectl -n %s annotate helmrelease %s %s=%s\n", key.Namespace, key.Name, api.ModeAnnotation, api.ModeEnabled)
	if err := optIn(ctx, env, key); err != nil {
		return err
	}
	cond, err := waitCorrected(ctx, env, key)
	if err != nil {
		return err
	}
	after, err := diff(ctx, env, key)
	if err != nil {
		return err
	}
	fmt.Printf("\nAfter the controller ran, live templates in sync with the manifest: %s\n", yes(after.ExitCode() == diffreport.ExitInSync))
	// Give the real MachineDeployment controller time to roll, if it would.
	time.Sleep(3 * time.Second)
	setsAfter, err := machineSets(ctx, env, key.Namespace, demoDeployment, false)
	if err != nil {
		return err
	}
	same := slices.Equal(setsAfter, setsBefore)
	fmt.Printf("MachineSets of MachineDeployment %s (made by the real Cluster API controller): %d before, %d after: %s\n",
		demoDeployment, len(setsBefore), len(setsAfter), map[bool]string{true: "the same MachineSet, no machine rolled", false: "a new MachineSet, machines roll"}[same])
	fmt.Printf("\n$ kubectl -n %s get helmrelease %s -o jsonpath='{.status.conditions[?(@.type==\"%s\")]}'\n", key.Namespace, key.Name, api.TemplatesInSyncCondition)
	fmt.Printf("%s=%s, reason %s:\n  %s\n", cond.Type, cond.Status, cond.Reason, cond.Message)
	return printEvents(ctx, env, key)
}

// demoDeployment is the fixture chart's MachineDeployment.
const demoDeployment = "mgmt-md0"

// machineSets lists the names of the MachineSets of MachineDeployment md,
// sorted; with wait, it first waits for the real MachineDeployment
// controller to create one.
func machineSets(ctx context.Context, env *testenv.Env, namespace, md string, wait bool) ([]string, error) {
	list := func(ctx context.Context) ([]string, error) {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion("cluster.x-k8s.io/v1beta2")
		l.SetKind("MachineSetList")
		err := env.Client.List(ctx, l, client.InNamespace(namespace), client.MatchingLabels{"cluster.x-k8s.io/deployment-name": md})
		var names []string
		for _, o := range l.Items {
			names = append(names, o.GetName()+"/"+string(o.GetUID()))
		}
		sort.Strings(names)
		return names, err
	}
	if !wait {
		return list(ctx)
	}
	var names []string
	err := waitPoll(ctx, func(ctx context.Context) (bool, error) {
		var err error
		names, err = list(ctx)
		return len(names) > 0, err
	})
	if err != nil {
		return nil, fmt.Errorf("the MachineDeployment controller made no MachineSet for %s: %w", md, err)
	}
	return names, nil
}

func waitPoll(ctx context.Context, f wait.ConditionWithContextFunc) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, f)
}

// diff runs the controller's pipeline read-only, as the diff command does.
func diff(ctx context.Context, env *testenv.Env, key client.ObjectKey) (diffreport.DiffReport, error) {
	hr := &helmv2.HelmRelease{}
	if err := env.Client.Get(ctx, key, hr); err != nil {
		return diffreport.DiffReport{}, err
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return diffreport.DiffReport{}, err
	}
	kinds, _ := manifest.ParseKinds(manifest.DefaultTemplateKinds)
	engine := &pipeline.Engine{Kinds: kinds, Releases: release.NewReader(0)}
	res, err := engine.Run(ctx, pipeline.Request{HelmRelease: hr, ReadOnly: true,
		Target: &target.Target{Client: env.Client, Secrets: cs.CoreV1(), Key: "demo"}})
	if err != nil {
		return diffreport.DiffReport{}, err
	}
	return diffreport.NewDiffReport(key.String(), res), nil
}

func optIn(ctx context.Context, env *testenv.Env, key client.ObjectKey) error {
	hr := &helmv2.HelmRelease{}
	if err := env.Client.Get(ctx, key, hr); err != nil {
		return err
	}
	base := hr.DeepCopy()
	hr.SetAnnotations(map[string]string{api.ModeAnnotation: api.ModeEnabled})
	return env.Client.Patch(ctx, hr, client.MergeFrom(base))
}

func waitCorrected(ctx context.Context, env *testenv.Env, key client.ObjectKey) (cond apimetaCondition, err error) {
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		hr := &helmv2.HelmRelease{}
		if err := env.Client.Get(ctx, key, hr); err != nil {
			return false, err
		}
		c := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition)
		if c != nil && c.Reason == api.DriftCorrectedReason {
			cond = apimetaCondition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message}
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return cond, fmt.Errorf("the controller did not correct %s within a minute: %w", key, err)
	}
	return cond, nil
}

type apimetaCondition struct{ Type, Status, Reason, Message string }

// printEvents lists the HelmRelease's events as `flux events --for
// HelmRelease/<name>` shows them.
func printEvents(ctx context.Context, env *testenv.Env, key client.ObjectKey) error {
	var list corev1.EventList
	if err := env.Client.List(ctx, &list, client.InNamespace(key.Namespace)); err != nil {
		return err
	}
	var evs []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "HelmRelease" && e.InvolvedObject.Name == key.Name {
			evs = append(evs, e)
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].LastTimestamp.Before(&evs[j].LastTimestamp) })
	fmt.Printf("\n$ flux events -n %s --for HelmRelease/%s\n", key.Namespace, key.Name)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE")
	for _, e := range evs {
		fmt.Fprintf(tw, "%s\t%s\t%s\tHelmRelease/%s\t%s\n", since(e.LastTimestamp.Time), e.Type, e.Reason, key.Name, e.Message)
	}
	return tw.Flush()
}

func since(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return time.Since(t).Round(time.Second).String()
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
