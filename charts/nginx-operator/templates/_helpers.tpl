{{/* The operator image reference; the tag defaults to the chart's appVersion. */}}
{{- define "nginx-operator.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The exporter image reference; the tag defaults to the chart's appVersion. */}}
{{- define "nginx-operator.exporterImage" -}}
{{ .Values.exporterImage.repository }}:{{ .Values.exporterImage.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The etcd image reference. */}}
{{- define "nginx-operator.etcdImage" -}}
{{ .Values.etcd.image.repository }}:{{ .Values.etcd.image.tag }}
{{- end }}

{{/* The stable DNS name of etcd member <index>, for peers and clients. */}}
{{- define "nginx-operator.etcdMember" -}}
nginx-operator-etcd-{{ .index }}.nginx-operator-etcd.{{ .namespace }}.svc
{{- end }}

{{/* --initial-cluster: every member's name and peer URL. */}}
{{- define "nginx-operator.etcdInitialCluster" -}}
{{- $members := list }}
{{- range $i := until (int .Values.etcd.members) }}
{{- $members = append $members (printf "nginx-operator-etcd-%d=https://%s:2380" $i (include "nginx-operator.etcdMember" (dict "index" $i "namespace" $.Release.Namespace))) }}
{{- end }}
{{- join "," $members }}
{{- end }}

{{/* --etcd-servers of the apiserver: every member's client URL. */}}
{{- define "nginx-operator.etcdServers" -}}
{{- $members := list }}
{{- range $i := until (int .Values.etcd.members) }}
{{- $members = append $members (printf "https://%s:2379" (include "nginx-operator.etcdMember" (dict "index" $i "namespace" $.Release.Namespace))) }}
{{- end }}
{{- join "," $members }}
{{- end }}

{{/* Scheduling of a pod: nodeSelector, tolerations, affinity and imagePullSecrets, each
     only when set. Called with the component's values and the root context. */}}
{{- define "nginx-operator.scheduling" -}}
{{- with .component.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .component.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .component.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
