{{/* Chart name, truncated to the 63 characters a DNS label allows. */}}
{{- define "mcp-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name: <release>-<chart>, or the release name if it already contains the chart name. */}}
{{- define "mcp-gateway.fullname" -}}
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

{{- define "mcp-gateway.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mcp-gateway.labels" -}}
helm.sh/chart: {{ include "mcp-gateway.chart" . }}
{{ include "mcp-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "mcp-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcp-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mcp-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mcp-gateway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "mcp-gateway.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/*
The session store: config.sessions.store if set, else "redis" when redis.existingSecret is
set, else "memory".
*/}}
{{- define "mcp-gateway.sessionStore" -}}
{{- $sessions := default dict .Values.config.sessions }}
{{- if $sessions.store }}
{{- $sessions.store }}
{{- else if .Values.redis.existingSecret }}
{{- "redis" }}
{{- else }}
{{- "memory" }}
{{- end }}
{{- end }}

{{/*
The gateway's config file (gateway.yaml): .Values.config with sessions.store filled in.
Fails the render on settings that would only fail when the pods start.
*/}}
{{- define "mcp-gateway.config" -}}
{{- $config := deepCopy .Values.config }}
{{- $sessions := default dict $config.sessions }}
{{- $store := include "mcp-gateway.sessionStore" . }}
{{- $_ := set $sessions "store" $store }}
{{- $_ := set $config "sessions" $sessions }}
{{- if hasKey $config "listen" }}
{{- fail "config.listen: leave it out; the chart sets the address and port (containerPort) through MCPGW_HOST/MCPGW_PORT" }}
{{- end }}
{{- if and (eq $store "redis") (not .Values.redis.existingSecret) }}
{{- fail "config.sessions.store is redis: set redis.existingSecret (a Secret holding the Redis URL under redis.key)" }}
{{- end }}
{{- if $sessions.redisUrl }}
{{- fail "config.sessions.redisUrl: don't put the Redis URL (it may hold a password) in the ConfigMap; use redis.existingSecret" }}
{{- end }}
{{- if not $config.upstreams }}
{{- fail "config.upstreams: at least one upstream is required" }}
{{- end }}
{{- toYaml $config }}
{{- end }}

{{/* Minimum terminationGracePeriodSeconds: preStop sleep + drain (rounded up) + 5 s to stop upstreams. */}}
{{- define "mcp-gateway.minGracePeriod" -}}
{{- $drainMs := int (dig "shutdown" "drainMs" 10000 .Values.config) }}
{{- add (int .Values.lifecycle.preStopSleepSeconds) (div (add $drainMs 999) 1000) 5 }}
{{- end }}
