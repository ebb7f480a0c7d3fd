{{/* Labels every object carries; component names the part. */}}
{{- define "baton.labels" -}}
app.kubernetes.io/name: baton
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ .root.Chart.Name }}-{{ .root.Chart.Version }}
{{- end }}

{{/* The selector of one component's pods. */}}
{{- define "baton.selector" -}}
app.kubernetes.io/name: baton
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* baton's image. */}}
{{- define "baton.image" -}}
{{ .Values.image.repository }}:{{ required "image.tag is required: the tag make images printed" .Values.image.tag }}
{{- end }}

{{/* The site's name, required. */}}
{{- define "baton.site" -}}
{{ required "site.name is required: it names the site (topology, paths)" .Values.site.name }}
{{- end }}

{{/* The mode, checked. */}}
{{- define "baton.mode" -}}
{{- $m := .Values.storage.mode -}}
{{- if not (has $m (list "btrfs" "zfs-drbd")) -}}
{{- fail (printf "storage.mode %q: want btrfs or zfs-drbd" $m) -}}
{{- end -}}
{{ $m }}
{{- end }}

{{/* The node pods use the node's network: asked for, or zfs-drbd. */}}
{{- define "baton.hostNetwork" -}}
{{- if or .Values.node.hostNetwork (eq (include "baton.mode" .) "zfs-drbd") }}true{{ end -}}
{{- end }}

{{/* The node agent's directory of this site on the host. */}}
{{- define "baton.siteDir" -}}
{{ trimSuffix "/" .Values.storage.hostDir }}/{{ include "baton.site" . }}
{{- end }}

{{/* Replicas per volume inside the site. */}}
{{- define "baton.placeCount" -}}
{{- if .Values.storageCluster.placeCount }}{{ .Values.storageCluster.placeCount }}{{ else if eq (include "baton.mode" .) "zfs-drbd" }}2{{ else }}1{{ end -}}
{{- end }}

{{/* The storage API's URL as the CSI secret carries it. */}}
{{- define "baton.storageAPIEndpoint" -}}
{{- if .Values.crossSite.enabled -}}
https://{{ required "crossSite.host is required with crossSite.enabled: the address peers reach the storage API at" .Values.crossSite.host }}:{{ .Values.crossSite.storageAPINodePort }}
{{- else -}}
https://baton-controller.{{ .Release.Namespace }}.svc:{{ .Values.operator.storageAPIPort }}
{{- end -}}
{{- end }}

{{/*
A component's image and, for baton's own image, the binary it runs:
include "baton.component" (list $ override binary)
*/}}
{{- define "baton.component" -}}
{{- $root := index . 0 -}}
{{- $override := index . 1 -}}
{{- $binary := index . 2 -}}
{{- if $override }}
image: {{ $override }}
{{- else }}
image: {{ include "baton.image" $root }}
command: [{{ $binary }}]
{{- end }}
imagePullPolicy: {{ $root.Values.image.pullPolicy }}
{{- end }}

{{/* The environment every pod's containers read their place from. */}}
{{- define "baton.podEnv" -}}
- name: NODE_NAME
  valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
- name: NODE_IP
  valueFrom: {fieldRef: {fieldPath: status.hostIP}}
- name: POD_NAME
  valueFrom: {fieldRef: {fieldPath: metadata.name}}
- name: POD_NAMESPACE
  valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
- name: POD_UID
  valueFrom: {fieldRef: {fieldPath: metadata.uid}}
{{- end }}
