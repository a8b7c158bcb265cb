{{/*
Chart name, truncated to the 63 characters of a DNS label.
*/}}
{{- define "toolgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name: release-chart unless the release name already contains the chart name.
*/}}
{{- define "toolgate.fullname" -}}
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

{{- define "toolgate.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "toolgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "toolgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "toolgate.labels" -}}
helm.sh/chart: {{ include "toolgate.chart" . }}
{{ include "toolgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: server
{{- end }}

{{- define "toolgate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "toolgate.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Image reference: repository@digest, or repository:tag (tag defaults to appVersion).
*/}}
{{- define "toolgate.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
Name of the Secret holding the tokens file.
*/}}
{{- define "toolgate.tokensSecretName" -}}
{{- default (include "toolgate.fullname" .) .Values.auth.existingSecret }}
{{- end }}

{{- define "toolgate.tokensSecretKey" -}}
{{- if .Values.auth.existingSecret }}{{ .Values.auth.existingSecretKey }}{{ else }}tokens.yaml{{ end }}
{{- end }}

{{/*
Whether the chart renders its own Secret (tokens and/or the Redis URL).
*/}}
{{- define "toolgate.createSecret" -}}
{{- if or (and (not .Values.auth.existingSecret) .Values.auth.tokens) (and .Values.redis.url (not .Values.redis.existingSecret)) (and .Values.approvals.secret (not .Values.approvals.existingSecret)) }}true{{ end }}
{{- end }}

{{- define "toolgate.claimName" -}}
{{- default (printf "%s-workspace" (include "toolgate.fullname" .)) .Values.persistence.existingClaim }}
{{- end }}

{{/*
Effective Deployment strategy type; see values.yaml (strategy.type).
*/}}
{{- define "toolgate.strategyType" -}}
{{- $shared := or (not .Values.persistence.enabled) (eq .Values.persistence.accessMode "ReadWriteMany") }}
{{- if .Values.strategy.type }}
{{- if and (eq .Values.strategy.type "RollingUpdate") (not $shared) }}
{{- fail (printf "strategy.type RollingUpdate needs persistence.accessMode ReadWriteMany (got %s): a new pod cannot mount a ReadWriteOnce volume the old pod still holds" .Values.persistence.accessMode) }}
{{- end }}
{{- .Values.strategy.type }}
{{- else if $shared }}RollingUpdate
{{- else }}Recreate
{{- end }}
{{- end }}

{{/*
Checks that fail the render with a clear message.
*/}}
{{- define "toolgate.validate" -}}
{{- if and (not .Values.auth.tokens) (not .Values.auth.existingSecret) }}
{{- fail "auth.tokens or auth.existingSecret is required: toolgate refuses to listen on a non-loopback address without bearer tokens" }}
{{- end }}
{{- if gt (int .Values.replicaCount) 1 }}
{{- if not .Values.persistence.enabled }}
{{- fail "replicaCount > 1 needs persistence.enabled: every replica must see the same workspace" }}
{{- end }}
{{- if ne .Values.persistence.accessMode "ReadWriteMany" }}
{{- fail (printf "replicaCount > 1 needs persistence.accessMode ReadWriteMany (got %s)" .Values.persistence.accessMode) }}
{{- end }}
{{- end }}
{{- if and .Values.policy.content .Values.policy.existingConfigMap }}
{{- fail "set only one of policy.content and policy.existingConfigMap" }}
{{- end }}
{{- if and .Values.redis.url .Values.redis.existingSecret }}
{{- fail "set only one of redis.url and redis.existingSecret" }}
{{- end }}
{{- end }}
