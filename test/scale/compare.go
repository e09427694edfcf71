package scale

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// The targets of the comparison with helm-controller in warn mode: at least
// this many times fewer requests, and less CPU per reconcile, for the
// add-on.
const (
	RequestsTarget = 10
	CPUTarget      = 5
)

// Comparison is helm-controller's figures over the add-on's at one fleet
// size: how many times more each costs. A ratio is null when the add-on's
// figure is 0 (or was not computed): helm-controller's is then given alone.
type Comparison struct {
	// N is the fleet size, and Fleet its shape.
	N     int    `json:"n"`
	Fleet string `json:"fleet"`
	// Requests is helm-controller's requests per HelmRelease per resync over
	// the add-on's, in the same window on the same releases: the load on the
	// API server. RequestsPerReconcile is the same per reconcile: the cost
	// of one pass, which stays fair when a controller falls behind its
	// interval and reconciles less often than once a resync.
	Requests             *float64 `json:"requests"`
	RequestsPerReconcile *float64 `json:"requestsPerReconcile"`
	// ControllerCPU and APIServerCPU are the CPU per reconcile ratios of
	// the controller process and of kube-apiserver.
	ControllerCPU *float64 `json:"controllerCpuPerReconcile"`
	APIServerCPU  *float64 `json:"apiServerCpuPerReconcile"`
}

// Compare pairs the add-on's and helm-controller's result at each size
// both were measured at, in the order of the add-on's runs.
func Compare(runs []Result) []Comparison {
	type key struct {
		n     int
		fleet string
	}
	helm := map[key]Result{}
	for _, r := range runs {
		if r.Controller == HelmController {
			helm[key{r.N, r.Fleet}] = r
		}
	}
	var out []Comparison
	for _, ours := range runs {
		h, ok := helm[key{ours.N, ours.Fleet}]
		if ours.Controller != TemplateDriftController || !ok {
			continue
		}
		out = append(out, Comparison{N: ours.N, Fleet: ours.Fleet,
			Requests:             ratio(&h.RequestsPerHRPerResync, &ours.RequestsPerHRPerResync),
			RequestsPerReconcile: ratio(perReconcile(h), perReconcile(ours)),
			ControllerCPU:        ratio(h.ControllerCPUPerReconcileMs, ours.ControllerCPUPerReconcileMs),
			APIServerCPU:         ratio(h.APIServerCPUPerReconcileMs, ours.APIServerCPUPerReconcileMs)})
	}
	return out
}

// perReconcile is r's requests per reconcile in the window, nil without
// reconciles.
func perReconcile(r Result) *float64 {
	if r.Reconciles <= 0 {
		return nil
	}
	v := float64(r.Requests.Total) / r.Reconciles
	return &v
}

// ratio is a/b, or nil when either is missing or b is not positive.
func ratio(a, b *float64) *float64 {
	if a == nil || b == nil || *b <= 0 {
		return nil
	}
	v := *a / *b
	return &v
}

// WriteComparisons prints one row per comparison: each ratio and whether
// it meets its target.
func WriteComparisons(w io.Writer, cs []Comparison) error {
	if len(cs) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join([]string{"N", "helm-controller / template-drift-controller: req/HR/resync",
		"req/reconcile", "CPU/reconcile ctrl", "CPU/reconcile apiserver"}, "\t"))
	for _, c := range cs {
		fmt.Fprintln(tw, strings.Join([]string{fmt.Sprint(c.N), against(c.Requests, RequestsTarget), against(c.RequestsPerReconcile, RequestsTarget),
			against(c.ControllerCPU, CPUTarget), against(c.APIServerCPU, CPUTarget)}, "\t"))
	}
	return tw.Flush()
}

// against prints a ratio and whether it meets target; a missing ratio
// (the add-on's figure was 0) meets any target.
func against(r *float64, target float64) string {
	if r == nil {
		return fmt.Sprintf("∞ (≥%g×: met)", target)
	}
	verdict := "met"
	if *r < target {
		verdict = "missed"
	}
	return fmt.Sprintf("%.1f× (≥%g×: %s)", *r, target, verdict)
}
