{{/* Object names: the release name, with "-deed" (or "-" and nameOverride) unless it already says it. */}}
{{- define "deed.fullname" -}}
{{- $name := .Values.nameOverride | default "deed" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 24 | trimSuffix "-" -}}
{{- else if contains $name .Release.Name -}}
{{- .Release.Name | trunc 24 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 24 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* repository@digest when a digest is given (the tag is then ignored), else repository:tag. */}}
{{- define "deed.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{- define "deed.selectorLabels" -}}
app.kubernetes.io/name: deed
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "deed.labels" -}}
{{ include "deed.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "deed.tlsSecretName" -}}
{{- if eq .Values.certificates.mode "provided" -}}
{{- required "certificates.provided.secretName is required in mode provided" .Values.certificates.provided.secretName -}}
{{- else -}}
{{- printf "%s-tls" (include "deed.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "deed.attestationSecretName" -}}
{{- .Values.attestation.existingSecret | default (printf "%s-attestation" (include "deed.fullname" .)) -}}
{{- end -}}

{{/* The webhook's own identity, excluded by matchConditions. */}}
{{- define "deed.serviceAccountUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "deed.fullname" .) -}}
{{- end -}}

{{/* The attestation Secret's entries the pods mount: the ring's ids, or the pre-ring `key`. */}}
{{- define "deed.attestationKeyIds" -}}
{{- .Values.attestation.keys | default (list "key") | toJson -}}
{{- end -}}

{{/*
The policy as it runs in the cluster: the attestation keys at their mounted paths (a
ring from attestation.keys, each read from its default file /etc/deed/attestation/ID),
and each reaper's service account acting for its environment (the validating webhook
refuses a delete by a principal acting for another environment or none).
*/}}
{{- define "deed.policy" -}}
{{- $policy := deepCopy .Values.policy -}}
{{- $given := $policy.attestation | default dict -}}
{{- if or (hasKey $given "keys") (hasKey $given "signingKey") -}}
{{- fail "policy.attestation: the chart writes the key ring; set attestation.keys and attestation.signingKey instead" -}}
{{- end -}}
{{- $keys := .Values.attestation.keys | default list -}}
{{- if $keys -}}
{{- if and (gt (len $keys) 1) (not .Values.attestation.signingKey) -}}
{{- fail (printf "attestation.signingKey: must name the key that signs (one of %s)" (join ", " $keys)) -}}
{{- end -}}
{{- $signing := .Values.attestation.signingKey | default (first $keys) -}}
{{- if not (has $signing $keys) -}}
{{- fail (printf "attestation.signingKey: %q is not in attestation.keys (%s)" $signing (join ", " $keys)) -}}
{{- end -}}
{{- $ring := list -}}
{{- range $id := $keys -}}
{{- $ring = append $ring (dict "id" $id) -}}
{{- end -}}
{{- $_ := set $policy "attestation" (dict "keys" $ring "signingKey" $signing) -}}
{{- else -}}
{{- if .Values.attestation.signingKey -}}
{{- fail "attestation.signingKey: names a key of attestation.keys, which is empty" -}}
{{- end -}}
{{- $_ := set $policy "attestation" (dict "keyFile" "/etc/deed/attestation/key") -}}
{{- end -}}
{{- $ids := list -}}
{{- $envs := list -}}
{{- range $env := ($policy.environments | default list) -}}
{{- $e := deepCopy $env -}}
{{- $ids = append $ids $e.id -}}
{{- if has $e.id $.Values.reaper.environments -}}
{{- $account := printf "%s:%s-reaper-%s" $.Release.Namespace (include "deed.fullname" $) $e.id -}}
{{- $accounts := $e.serviceAccounts | default list -}}
{{- if not (has $account $accounts) -}}
{{- $_ := set $e "serviceAccounts" (append $accounts $account) -}}
{{- end -}}
{{- end -}}
{{- $envs = append $envs $e -}}
{{- end -}}
{{- range $id := .Values.reaper.environments -}}
{{- if not (has $id $ids) -}}
{{- fail (printf "reaper.environments: the policy has no environment %q" $id) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $policy "environments" $envs -}}
{{- toYaml $policy -}}
{{- end -}}

{{/* Security contexts from the values (podSecurityContext, securityContext), for the webhook and the reaper alike. */}}
{{- define "deed.podSecurityContext" -}}
{{- toYaml .Values.podSecurityContext -}}
{{- end -}}

{{- define "deed.containerSecurityContext" -}}
{{- toYaml .Values.securityContext -}}
{{- end -}}

{{/* Which requests reach Deed: opted-in namespaces, never kube-system or Deed's own. */}}
{{- define "deed.webhookCommon" -}}
admissionReviewVersions: ["v1"]
sideEffects: None
failurePolicy: {{ .Values.webhook.failurePolicy | default "Fail" }}
timeoutSeconds: {{ .Values.webhook.timeoutSeconds }}
matchPolicy: Equivalent
namespaceSelector:
  matchExpressions:
    - key: deed.dev/sandbox
      operator: In
      values: ["enabled"]
    # Set by the API server from the namespace's name: nobody can forge it.
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values: {{ list "kube-system" .Release.Namespace | uniq | toJson }}
# CEL over the authenticated requester, which no client can choose (unlike labels).
matchConditions:
  - name: exclude-deed-itself
    expression: {{ printf "request.userInfo.username != '%s'" (include "deed.serviceAccountUser" .) | quote }}
  - name: exclude-kube-system-service-accounts
    expression: {{ include "deed.kubeSystemExclusion" . | quote }}
{{- with .Values.webhook.matchConditions }}
{{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- /* kube-system's service accounts stay out, but for the workload controllers' creations and owner-reference changes (the policy's workloadControllers). */ -}}
{{- define "deed.kubeSystemExclusion" -}}
{{- $controllers := include "deed.defaultWorkloadControllers" . | fromJsonArray -}}
{{- with .Values.policy.workloadControllers }}{{ if hasKey . "users" }}{{ $controllers = .users }}{{ end }}{{ end -}}
{{- if $controllers -}}
!('system:serviceaccounts:kube-system' in request.userInfo.groups) || {{ include "deed.volumeBinding" . }} || (request.userInfo.username in {{ include "deed.celList" $controllers }} && (!has(request.subResource) || request.subResource == '') && (request.operation == 'CREATE' || (request.operation == 'UPDATE' && (has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []) != (has(oldObject.metadata.ownerReferences) ? oldObject.metadata.ownerReferences : []))))
{{- else -}}
!('system:serviceaccounts:kube-system' in request.userInfo.groups) || {{ include "deed.volumeBinding" . }}
{{- end -}}
{{- end -}}

{{- /* The PV controller's binding of a claim filled from a data source to its volume, judged on that source (claim.at-binding). */ -}}
{{- define "deed.volumeBinding" -}}
(request.userInfo.username == 'system:serviceaccount:kube-system:persistent-volume-binder' && request.resource.group == '' && request.resource.resource == 'persistentvolumeclaims' && request.operation == 'UPDATE' && (!has(request.subResource) || request.subResource == '') && (has(object.spec.dataSource) || has(object.spec.dataSourceRef)) && has(object.spec.volumeName) && object.spec.volumeName != '' && (!has(oldObject.spec.volumeName) || oldObject.spec.volumeName == ''))
{{- end -}}

{{- /* The policy's workloadControllers.users, as a JSON list (the defaults where it names none). */ -}}
{{- define "deed.workloadControllers" -}}
{{- $controllers := include "deed.defaultWorkloadControllers" . | fromJsonArray -}}
{{- with .Values.policy.workloadControllers }}{{ if hasKey . "users" }}{{ $controllers = .users }}{{ end }}{{ end -}}
{{- toJson $controllers -}}
{{- end -}}

{{- /* A listed controller's UPDATE of an environment's object (src/install/kind-rules.ts operatorStampsCondition). */ -}}
{{- define "deed.operatorStampsCondition" -}}
request.userInfo.username in {{ include "deed.celList" (include "deed.workloadControllers" . | fromJsonArray) }} && has(oldObject.metadata.labels) && '{{ .Values.policy.labelPrefix }}/managed' in oldObject.metadata.labels
{{- end -}}

{{- /* A CEL list of string literals: JSON's string escapes are CEL's too. */ -}}
{{- define "deed.celList" -}}
[{{- range $i, $v := . }}{{ if $i }}, {{ end }}{{ toJson $v }}{{ end -}}]
{{- end -}}
