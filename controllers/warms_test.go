package controllers

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/api"
)

// TestWarms: the warm-up decodes the releases of the opted-in
// HelmReleases whose passes read as the controller in the local cluster.
func TestWarms(t *testing.T) {
	enabled := map[string]string{api.ModeAnnotation: api.ModeEnabled}
	tests := []struct {
		name           string
		annotations    map[string]string
		remote         bool
		serviceAccount string
		want           bool
	}{
		{name: "enabled, local, as the controller", annotations: enabled, want: true},
		{name: "warn", annotations: map[string]string{api.ModeAnnotation: api.ModeWarn}, want: true},
		{name: "not opted in", annotations: nil},
		{name: "disabled", annotations: map[string]string{api.ModeAnnotation: api.ModeDisabled}},
		{name: "unknown mode", annotations: map[string]string{api.ModeAnnotation: "on"}},
		{name: "invalid strategy", annotations: map[string]string{api.ModeAnnotation: api.ModeEnabled, api.StrategyAnnotation: "fast"}},
		{name: "remote cluster", annotations: enabled, remote: true},
		{name: "impersonated", annotations: enabled, serviceAccount: "tenant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(warms(tt.annotations, tt.remote, tt.serviceAccount)).To(Equal(tt.want))
		})
	}
}
