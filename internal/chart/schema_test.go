package chart_test

import (
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"

	. "github.com/onsi/gomega"
)

// TestRejectsBadValues checks that values.schema.json (applied by Helm when
// it renders) and the chart's own checks refuse misconfigurations before
// anything reaches the cluster.
func TestRejectsBadValues(t *testing.T) {
	cases := []struct {
		// name describes the mistake.
		name string
		// values is a values file fragment over the defaults.
		values string
		// wantErr is a substring of the error Helm reports.
		wantErr string
	}{
		{name: "replicas as a word", values: `replicas: two`, wantErr: "/replicas"},
		{name: "misspelt top-level key", values: `replica: 2`, wantErr: "replica"},
		{name: "misspelt nested key", values: "image:\n  pullpolicy: Always", wantErr: "pullpolicy"},
		{name: "unknown pull policy", values: "image:\n  pullPolicy: Sometimes", wantErr: "/image/pullPolicy"},
		{name: "flag bool as string", values: `watchAllNamespaces: "yes"`, wantErr: "/watchAllNamespaces"},
		{name: "resync interval not a duration", values: `resyncInterval: ten minutes`, wantErr: "/resyncInterval"},
		{name: "no concurrency", values: `concurrent: 0`, wantErr: "/concurrent"},
		{name: "shutdown timeout not a duration", values: `gracefulShutdownTimeout: 60`, wantErr: "/gracefulShutdownTimeout"},
		{name: "grace period as a duration", values: `terminationGracePeriodSeconds: 70s`, wantErr: "/terminationGracePeriodSeconds"},
		{name: "unknown log level", values: `logLevel: verbose`, wantErr: "/logLevel"},
		{name: "empty template kinds", values: "templateKinds:\n  patterns: []", wantErr: "/templateKinds/patterns"},
		{name: "template kind without group", values: "templateKinds:\n  patterns: [DockerMachineTemplate]", wantErr: "/templateKinds/patterns/0"},
		{
			name:    "wildcard resource",
			values:  "templateKinds:\n  rbac: [{apiGroup: infrastructure.cluster.x-k8s.io, resources: ['*']}]",
			wantErr: "/templateKinds/rbac/0/resources/0",
		},
		{
			name:    "wildcard group",
			values:  "templateKinds:\n  rbac: [{apiGroup: '*', resources: [dockermachinetemplates]}]",
			wantErr: "/templateKinds/rbac/0/apiGroup",
		},
		{
			name:    "rbac rule with verbs",
			values:  "templateKinds:\n  rbac: [{apiGroup: x.io, resources: [as], verbs: ['*']}]",
			wantErr: "verbs",
		},
		{name: "bad scrape interval", values: "serviceMonitor:\n  interval: 30 seconds", wantErr: "/serviceMonitor/interval"},
		{name: "bad pod monitor interval", values: "podMonitor:\n  interval: 1 minute", wantErr: "/podMonitor/interval"},
		{name: "not-in-sync threshold not a Prometheus duration", values: "prometheusRule:\n  notInSyncFor: 1h30", wantErr: "/prometheusRule/notInSyncFor"},
		{name: "empty not-in-sync threshold", values: "prometheusRule:\n  notInSyncFor: ''", wantErr: "/prometheusRule/notInSyncFor"},
		{name: "runbook URL with an anchor", values: "prometheusRule:\n  runbookBaseURL: https://example.com/runbooks#alerts", wantErr: "/prometheusRule/runbookBaseURL"},
		{name: "dashboard namespace not a DNS label", values: "grafanaDashboard:\n  namespace: Monitoring", wantErr: "/grafanaDashboard/namespace"},
		{name: "extra arg without dashes", values: `extraArgs: [concurrent=8]`, wantErr: "/extraArgs/0"},
		{name: "extra env without a name", values: `extraEnv: [{value: "100"}]`, wantErr: "/extraEnv/0"},
		{name: "extra env as a map", values: "extraEnv:\n  GOGC: '100'", wantErr: "/extraEnv"},
		{name: "extra env with a value and a source", values: "extraEnv: [{name: A, value: b, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]", wantErr: "/extraEnv/0"},
		{name: "extra env with a number", values: "extraEnv: [{name: GOGC, value: 100}]", wantErr: "/extraEnv/0/value"},
		{name: "digest without its algorithm", values: "image:\n  digest: " + strings.Repeat("ab", 32), wantErr: "/image/digest"},
		{name: "digest too short", values: "image:\n  digest: sha256:abc", wantErr: "/image/digest"},
		{name: "digest in capitals", values: "image:\n  digest: sha256:" + strings.Repeat("AB", 32), wantErr: "/image/digest"},
		{name: "pod label as a number", values: "podLabels:\n  tier: 1", wantErr: "/podLabels/tier"},
		{name: "pod annotations as a list", values: "podAnnotations: [a]", wantErr: "/podAnnotations"},
		{name: "priority class not a DNS name", values: "priorityClassName: High", wantErr: "/priorityClassName"},
		{
			name:    "spread constraint without a topology key",
			values:  "topologySpreadConstraints: [{maxSkew: 1, whenUnsatisfiable: ScheduleAnyway}]",
			wantErr: "/topologySpreadConstraints/0",
		},
		{
			name:    "spread constraint with an unknown policy",
			values:  "topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Never}]",
			wantErr: "/topologySpreadConstraints/0/whenUnsatisfiable",
		},
		{name: "misspelt tests key", values: "tests:\n  enable: false", wantErr: "enable"},
		{name: "pod label replacing a selector label", values: "podLabels:\n  app.kubernetes.io/instance: mine", wantErr: "podLabels.app.kubernetes.io/instance"},
		{
			name:    "replicas without leader election",
			values:  "replicas: 2\nleaderElection:\n  enabled: false",
			wantErr: "replicas > 1 needs leaderElection.enabled",
		},
		{
			name:    "service monitor without service",
			values:  "serviceMonitor:\n  enabled: true\nmetrics:\n  service:\n    enabled: false",
			wantErr: "serviceMonitor.enabled needs metrics.service.enabled",
		},
		{
			name:    "both a pod monitor and a service monitor",
			values:  "serviceMonitor:\n  enabled: true\npodMonitor:\n  enabled: true",
			wantErr: "both scrape the same pods",
		},
		{
			name:    "existing service account without a name",
			values:  "serviceAccount:\n  create: false",
			wantErr: "serviceAccount.name is required",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			vals, err := common.ReadValues([]byte(tc.values))
			g.Expect(err).NotTo(HaveOccurred())
			_, err = renderChart(t, vals)
			t.Log(err)
			g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
		})
	}
}
