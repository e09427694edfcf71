{{/*
Chart name, overridable with nameOverride.
*/}}
{{- define "tdc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the chart's objects: fullnameOverride, else the release name when
it already contains the chart name, else <release>-<chart>. Truncated to 63
characters (DNS label), before any suffix is added by the caller.
*/}}
{{- define "tdc.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Chart name and version, for the helm.sh/chart label.
*/}}
{{- define "tdc.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Selector labels: stable for the life of a release (Deployment selectors are
immutable), and the same as config/manager's.
*/}}
{{- define "tdc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tdc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Labels that the pods of every instance carry, the main one and each shard's:
the metrics Service and the PodMonitor select them, so every shard is
scraped. app.kubernetes.io/part-of names the release's objects as a whole,
and app is the label Flux's PodMonitor (flux2-monitoring-example) selects
its controllers by.
*/}}
{{- define "tdc.allInstancesLabels" -}}
app.kubernetes.io/name: {{ include "tdc.name" . }}
app.kubernetes.io/part-of: {{ include "tdc.fullname" . }}
{{- end }}

{{/*
Common labels of every object.
*/}}
{{- define "tdc.labels" -}}
helm.sh/chart: {{ include "tdc.chart" . }}
{{ include "tdc.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Name of the metrics Service: a DNS-1035 label, so the suffix must fit in 63.
*/}}
{{- define "tdc.metricsServiceName" -}}
{{- printf "%s-metrics" (include "tdc.fullname" . | trunc 55 | trimSuffix "-") }}
{{- end }}

{{/*
Name of the ServiceAccount the controller runs as.
*/}}
{{- define "tdc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "tdc.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Container image reference: repository@digest when image.digest is set (the
tag is then ignored), else repository:tag, the tag defaulting to the chart's
appVersion.
*/}}
{{- define "tdc.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
The labels the chart sets on the controller's Pods and selects them by (the
Deployments, the metrics Service, the PodMonitor, Flux's PodMonitor):
podLabels may not set them.
*/}}
{{- define "tdc.ownPodLabels" -}}
{{- list "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/part-of" "app" | toJson }}
{{- end }}

{{/*
Settings that cannot be expressed in values.schema.json.
*/}}
{{- define "tdc.validate" -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicas > 1 needs leaderElection.enabled: without it every replica would correct templates" }}
{{- end }}
{{- if and .Values.serviceMonitor.enabled .Values.podMonitor.enabled }}
{{- fail "serviceMonitor.enabled and podMonitor.enabled: both scrape the same pods, so every series would be stored twice; enable one" }}
{{- end }}
{{- if and .Values.serviceMonitor.enabled (not .Values.metrics.service.enabled) }}
{{- fail "serviceMonitor.enabled needs metrics.service.enabled: the ServiceMonitor selects the metrics Service" }}
{{- end }}
{{- $own := include "tdc.ownPodLabels" . | fromJsonArray }}
{{- range $key, $_ := .Values.podLabels }}
{{- if has $key $own }}
{{- fail (printf "podLabels.%s: the chart sets this label on its Pods, and its Deployments, metrics Service and PodMonitors select them by it; remove it from podLabels" $key) }}
{{- end }}
{{- end }}
{{- end }}
