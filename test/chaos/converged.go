package chaos

import (
	"encoding/json"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/templatedrift/template-drift-controller/api"
)

// Pending counts the HelmReleases that have not converged, by reason
// ("none" for no TemplatesInSync condition yet, "stale" for a condition of
// an older generation): converged is TemplatesInSync=True, or a condition
// accept takes (the non-True reason a scenario expects; nil takes none).
func Pending(list []helmv2.HelmRelease, accept func(*helmv2.HelmRelease, *metav1.Condition) bool) map[string]int {
	out := map[string]int{}
	for i := range list {
		hr := &list[i]
		c := apimeta.FindStatusCondition(hr.Status.Conditions, api.TemplatesInSyncCondition)
		switch {
		case c == nil:
			out["none"]++
		case c.ObservedGeneration != 0 && c.ObservedGeneration < hr.Generation:
			out["stale"]++
		case c.Status == metav1.ConditionTrue:
		case accept != nil && accept(hr, c):
		default:
			out[c.Reason]++
		}
	}
	return out
}

// stoppedMessage is what the controller logs when it exits on an error
// (cmd/template-drift-controller main); a SIGKILL or a SIGTERM logs none.
const stoppedMessage = "Controller stopped"

// OwnExits returns the error of each exit of the controller on its own
// that its log (JSON lines) records: a process StartServing started again
// without the harness asking, which no scenario expects.
func OwnExits(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, stoppedMessage) {
			continue
		}
		var l struct {
			Msg   string `json:"msg"`
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == stoppedMessage {
			out = append(out, l.Error)
		}
	}
	return out
}
