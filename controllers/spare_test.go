package controllers_test

import "strings"

// spareTemplates renders templates that nothing references: a locked
// LockedMachineTemplate and a Metal3MachineTemplate, with the image server
// of url. They are the only templates a recreate can delete at once (a
// template in use cannot be deleted without leaving its users pointing at
// nothing: "delete only when unused").
func spareTemplates(url string) string {
	return strings.NewReplacer("URL", url).Replace(`---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: LockedMachineTemplate
metadata: {name: spare-locked}
spec:
  template:
    spec: {image: "URL", flavor: large}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata: {name: spare-m3mt}
spec:
  template:
    spec:
      image: {url: "URL", checksum: "URL.sha256sum", checksumType: sha256, format: qcow2}
`)
}

// spareLive and spareRelease add the spare templates, drifted, to the
// bootstrap and management worlds.
var (
	spareLive    = withExtra(bootstrap, spareTemplates(bootstrap.ImageURL))
	spareRelease = withExtra(mgmt, spareTemplates(mgmt.ImageURL))
)

func withExtra(v values, extra string) values {
	v.Extra += extra
	return v
}
