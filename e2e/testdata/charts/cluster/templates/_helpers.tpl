{{/* hash returns 10 hex characters of the sha256 of a rendered spec. */}}
{{- define "cluster.hash" -}}{{ . | sha256sum | trunc 10 }}{{- end -}}

{{/* m3dt.spec is a Metal3DataTemplate spec with IMAGE_SERVER_IP as a placeholder. */}}
{{- define "cluster.m3dt.spec" -}}
clusterName: {{ .root.Values.cluster }}
metaData:
  strings:
    - key: role
      value: {{ .role }}
    - key: image-server
      value: IMAGE_SERVER_IP
{{- end -}}

{{/* m3mt.spec is a Metal3MachineTemplate spec with IMAGE_URL as a placeholder. */}}
{{- define "cluster.m3mt.spec" -}}
template:
  spec:
    dataTemplate:
      name: {{ .dataTemplate }}
    image:
      url: IMAGE_URL
      checksum: IMAGE_URL.sha256sum
      checksumType: sha256
      format: qcow2
{{- end -}}

{{- define "cluster.kct.spec" -}}
template:
  spec:
    joinConfiguration:
      nodeRegistration:
        kubeletExtraArgs:
{{- range $k, $v := .Values.kubeletArgs }}
          - name: {{ $k }}
            value: {{ $v | quote }}
{{- end }}
{{- end -}}
