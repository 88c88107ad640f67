{{/* Names and labels. */}}
{{- define "benchline.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "benchline.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "benchline.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "benchline.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "benchline.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "benchline.image" -}}
{{- printf "%s:%s" .image.repository (default .root.Chart.AppVersion .image.tag) -}}
{{- end -}}

{{/* The baseline server's URL: the value, or the chart's own server. */}}
{{- define "benchline.baselineURL" -}}
{{- if .Values.models.baselineURL -}}
{{- .Values.models.baselineURL -}}
{{- else if .Values.baselines.enabled -}}
{{- printf "http://%s-baselines:8400/v1" (include "benchline.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* Environment and volumes every benchline container shares. */}}
{{- define "benchline.env" -}}
- name: BENCHLINE_CONFIG
  value: /etc/benchline/config.yaml
{{- with (include "benchline.baselineURL" .) }}
- name: BENCHLINE_BASELINE_URL
  value: {{ . | quote }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "benchline.envFrom" -}}
{{- if .Values.existingSecret }}
envFrom:
  - secretRef:
      name: {{ .Values.existingSecret }}
{{- end }}
{{- end -}}

{{- define "benchline.configVolume" -}}
{{- if .Values.temporal.tlsSecret }}
- name: config
  projected:
    sources:
      - configMap:
          name: {{ include "benchline.fullname" . }}-config
      # Mutual TLS to Temporal: a kubernetes.io/tls Secret with ca.crt
      # (cert-manager writes one), under /etc/benchline/temporal-tls.
      - secret:
          name: {{ .Values.temporal.tlsSecret }}
          items:
            - {key: tls.crt, path: temporal-tls/tls.crt}
            - {key: tls.key, path: temporal-tls/tls.key, mode: 0400}
            - {key: ca.crt, path: temporal-tls/ca.crt}
{{- else }}
- name: config
  configMap:
    name: {{ include "benchline.fullname" . }}-config
{{- end }}
{{- end -}}

{{- define "benchline.podAnnotations" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- if .Values.metrics.podAnnotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .Values.metrics.port | quote }}
prometheus.io/path: /metrics
{{- end }}
{{- end -}}

{{/* Worker arguments shared by both queues. */}}
{{- define "benchline.workerArgs" -}}
- --metrics-addr
- {{ printf "0.0.0.0:%v" .Values.metrics.port | quote }}
- --log-format
- {{ .Values.logs.format | quote }}
- --log-level
- {{ .Values.logs.level | quote }}
{{- end -}}

{{- define "benchline.probes" -}}
ports:
  - name: metrics
    containerPort: {{ .Values.metrics.port }}
    protocol: TCP
readinessProbe:
  httpGet: {path: /healthz, port: metrics}
  periodSeconds: 5
  failureThreshold: 3
livenessProbe:
  httpGet: {path: /healthz, port: metrics}
  initialDelaySeconds: 60
  periodSeconds: 20
  failureThreshold: 6
{{- end -}}

{{/* A memory quantity (Mi, Gi, M, G or bytes) in MiB, for --memory-limit-mb. */}}
{{- define "benchline.mebibytes" -}}
{{- $q := toString . -}}
{{- if hasSuffix "Gi" $q -}}{{ mul (trimSuffix "Gi" $q | int) 1024 }}
{{- else if hasSuffix "Mi" $q -}}{{ trimSuffix "Mi" $q | int }}
{{- else if hasSuffix "G" $q -}}{{ div (mul (trimSuffix "G" $q | int) 1000000000) 1048576 }}
{{- else if hasSuffix "M" $q -}}{{ div (mul (trimSuffix "M" $q | int) 1000000) 1048576 }}
{{- else -}}{{ div ($q | int64) 1048576 }}
{{- end -}}
{{- end -}}
