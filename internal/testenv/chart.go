package testenv

import (
	"bytes"
	"text/template"
)

// ChartValues parameterise the fixture "cluster" chart, shaped like Sylva's
// sylva-capi-cluster: a Cluster, a KubeadmControlPlane and a
// MachineDeployment cloning from Metal3MachineTemplates that name
// Metal3DataTemplates, and a KubeadmConfigTemplate.
type ChartValues struct {
	// ImageURL is the OS image server (the bootstrap cluster's before the
	// pivot, the management cluster's after).
	ImageURL string
	// MetadataIP goes into the (locked) Metal3DataTemplate metaData.
	MetadataIP string
	// CPKind is the control plane's machine template kind:
	// Metal3MachineTemplate (mutable) or LockedMachineTemplate.
	CPKind string
	// Extra is appended to the manifest (more consumers).
	Extra string
	// Metal3Cluster gives the Cluster a Metal3Cluster infrastructure whose
	// control-plane endpoint is 127.0.0.1:9, where nothing listens: with
	// it the real KubeadmControlPlane controller gets far enough to create
	// Machines, and whatever the managers dial stays on loopback.
	Metal3Cluster bool
}

// Bootstrap and Management are the values before and after the pivot: the
// image server of the short-lived bootstrap cluster, then the management
// cluster's.
var (
	Bootstrap  = ChartValues{ImageURL: "http://10.10.10.17/images/ubuntu.qcow2", MetadataIP: "10.10.10.17", CPKind: "Metal3MachineTemplate"}
	Management = ChartValues{ImageURL: "http://192.168.100.2/images/ubuntu.qcow2", MetadataIP: "10.10.10.17", CPKind: "Metal3MachineTemplate"}
)

const chartTemplate = `---
# Source: cluster/templates/cluster.yaml
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: mgmt
spec:
  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: KubeadmControlPlane, name: mgmt-cp}
{{- if .Metal3Cluster}}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3Cluster, name: mgmt}
---
# Source: cluster/templates/metal3cluster.yaml
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Cluster
metadata:
  name: mgmt
spec:
  controlPlaneEndpoint: {host: 127.0.0.1, port: 9}
{{- end}}
---
# Source: cluster/templates/machinedeployment.yaml
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: mgmt-md0
spec:
  clusterName: mgmt
  selector: {matchLabels: {}}
  template:
    spec:
      clusterName: mgmt
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: mgmt-md0}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: mgmt-md0}
---
# Source: cluster/templates/controlplane.yaml
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata:
  name: mgmt-cp
spec:
  version: v1.33.4
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: {{.CPKind}}, name: mgmt-cp}
---
# Source: cluster/templates/bootstrap.yaml
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata:
  name: mgmt-md0
spec:
  template:
    spec:
      files: [{path: /etc/motd, content: hello}]
---
# Source: cluster/templates/m3mt.yaml
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata:
  name: mgmt-md0
spec:
  template:
    spec:
      image: {url: "{{.ImageURL}}", checksum: "{{.ImageURL}}.sha256sum", checksumType: sha256, format: qcow2}
      dataTemplate: {name: mgmt-md0-metadata}
{{- if eq .CPKind "Metal3MachineTemplate"}}
---
# Source: cluster/templates/m3mt.yaml
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata:
  name: mgmt-cp
spec:
  template:
    spec:
      image: {url: "{{.ImageURL}}", checksum: "{{.ImageURL}}.sha256sum", checksumType: sha256, format: qcow2}
      dataTemplate: {name: mgmt-cp-metadata}
{{- else}}
---
# Source: cluster/templates/locked.yaml
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: LockedMachineTemplate
metadata:
  name: mgmt-cp
spec:
  template:
    spec: {image: "{{.ImageURL}}", flavor: large}
{{- end}}
---
# Source: cluster/templates/m3dt.yaml
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata:
  name: mgmt-md0-metadata
spec:
  clusterName: mgmt
  metaData:
    strings: [{key: image-server, value: "{{.MetadataIP}}"}]
---
# Source: cluster/templates/m3dt.yaml
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata:
  name: mgmt-cp-metadata
spec:
  clusterName: mgmt
  metaData:
    strings: [{key: image-server, value: "{{.MetadataIP}}"}]
{{.Extra}}`

// RenderClusterChart renders the fixture chart, as `helm template` would.
func RenderClusterChart(v ChartValues) string {
	var b bytes.Buffer
	if err := template.Must(template.New("chart").Parse(chartTemplate)).Execute(&b, v); err != nil {
		panic(err)
	}
	return b.String()
}
