/*
Copyright The nginx-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
	"github.com/example/nginx-operator/pkg/apis/operator/operand"
)

// Labels the controller sets on the pods and the Service and selects them by. Users may
// add labels, never replace these: a replaced selector label would orphan the pods, and
// the controller's caches hold only objects that carry the managed-by label.
var reservedLabels = sets.New(operand.NameLabel, operand.InstanceLabel, operand.ManagedByLabel)

var (
	supportedTolerationOperators = sets.New(corev1.TolerationOpExists, corev1.TolerationOpEqual)
	supportedTaintEffects        = sets.New(corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)
	supportedUnsatisfiable       = sets.New(corev1.DoNotSchedule, corev1.ScheduleAnyway)
	supportedInclusionPolicies   = sets.New(corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore)
	supportedSeccompTypes        = sets.New(corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined, corev1.SeccompProfileTypeLocalhost)
	supportedAppArmorTypes       = sets.New(corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined, corev1.AppArmorProfileTypeLocalhost)
	supportedProcMounts          = sets.New(corev1.DefaultProcMount, corev1.UnmaskedProcMount)
	supportedNodeOperators       = sets.New(corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
		corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt)
)

// validatePodOptions checks what goes into the pod template besides the container. The
// checks are those of kube-apiserver that a typo is likely to hit; what they miss, the
// Deployment's refusal reports in status.
func validatePodOptions(pod *operator.PodOptions, fldPath *field.Path) field.ErrorList {
	allErrs := validateUserLabels(pod.Labels, fldPath.Child("labels"))
	allErrs = append(allErrs, validateUserAnnotations(pod.Annotations, fldPath.Child("annotations"))...)
	allErrs = append(allErrs, metav1validation.ValidateLabels(pod.NodeSelector, fldPath.Child("nodeSelector"))...)
	for i := range pod.Tolerations {
		allErrs = append(allErrs, validateToleration(&pod.Tolerations[i], fldPath.Child("tolerations").Index(i))...)
	}
	if pod.Affinity != nil {
		allErrs = append(allErrs, validateAffinity(pod.Affinity, fldPath.Child("affinity"))...)
	}
	allErrs = append(allErrs, validateTopologySpread(pod.TopologySpreadConstraints, fldPath.Child("topologySpreadConstraints"))...)
	if pod.PriorityClassName != "" {
		allErrs = append(allErrs, validateObjectName(pod.PriorityClassName, fldPath.Child("priorityClassName"))...)
	}
	for i, secret := range pod.ImagePullSecrets {
		allErrs = append(allErrs, validateObjectName(secret.Name, fldPath.Child("imagePullSecrets").Index(i).Child("name"))...)
	}
	if pod.ServiceAccountName != "" {
		allErrs = append(allErrs, validateObjectName(pod.ServiceAccountName, fldPath.Child("serviceAccountName"))...)
	}
	if pod.SecurityContext != nil {
		allErrs = append(allErrs, validatePodSecurityContext(pod.SecurityContext, fldPath.Child("securityContext"))...)
	}
	return allErrs
}

// validateUserLabels checks labels added to the controller's own.
func validateUserLabels(labels map[string]string, fldPath *field.Path) field.ErrorList {
	allErrs := metav1validation.ValidateLabels(labels, fldPath)
	for _, key := range sets.List(sets.KeySet(labels)) {
		if reservedLabels.Has(key) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(key), "is set by the controller, which selects its pods and Services by it"))
		}
	}
	return allErrs
}

// reservedAnnotationPrefix marks the pod annotations the controller and its sidecar
// communicate through (content hashes, reload asks, the status server): a user's value
// would steer them, so the controller's own always win and users may set none.
const reservedAnnotationPrefix = operator.GroupName + "/"

// validateUserAnnotations checks annotations added to the controller's own.
func validateUserAnnotations(annotations map[string]string, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateAnnotations(annotations, fldPath)
	for _, key := range sets.List(sets.KeySet(annotations)) {
		if strings.HasPrefix(key, reservedAnnotationPrefix) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Key(key), "keys under "+reservedAnnotationPrefix+" are set by the controller"))
		}
	}
	return allErrs
}

func validateToleration(t *corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if t.Key != "" {
		allErrs = append(allErrs, metav1validation.ValidateLabelName(t.Key, fldPath.Child("key"))...)
	} else if t.Operator != corev1.TolerationOpExists {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("operator"), t.Operator, "must be Exists when key is empty, to tolerate every taint"))
	}
	switch {
	case t.Operator != "" && !supportedTolerationOperators.Has(t.Operator):
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("operator"), t.Operator, sets.List(supportedTolerationOperators)))
	case t.Operator == corev1.TolerationOpExists && t.Value != "":
		allErrs = append(allErrs, field.Invalid(fldPath.Child("value"), t.Value, "must be empty when operator is Exists"))
	case t.Value != "":
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("value"), t.Value, msg))
		}
	}
	if t.Effect != "" && !supportedTaintEffects.Has(t.Effect) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("effect"), t.Effect, sets.List(supportedTaintEffects)))
	}
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("effect"), t.Effect, "must be NoExecute when tolerationSeconds is set"))
	}
	return allErrs
}

func validateAffinity(a *corev1.Affinity, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		naPath := fldPath.Child("nodeAffinity")
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			reqPath := naPath.Child("requiredDuringSchedulingIgnoredDuringExecution")
			if len(req.NodeSelectorTerms) == 0 {
				allErrs = append(allErrs, field.Required(reqPath.Child("nodeSelectorTerms"), "at least one term"))
			}
			for i := range req.NodeSelectorTerms {
				allErrs = append(allErrs, validateNodeSelectorTerm(&req.NodeSelectorTerms[i], reqPath.Child("nodeSelectorTerms").Index(i))...)
			}
		}
		for i, pref := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			prefPath := naPath.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			allErrs = append(allErrs, validateWeight(pref.Weight, prefPath.Child("weight"))...)
			allErrs = append(allErrs, validateNodeSelectorTerm(&pref.Preference, prefPath.Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		allErrs = append(allErrs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, fldPath.Child("podAffinity"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		allErrs = append(allErrs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, fldPath.Child("podAntiAffinity"))...)
	}
	return allErrs
}

func validateNodeSelectorTerm(term *corev1.NodeSelectorTerm, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, req := range term.MatchExpressions {
		reqPath := fldPath.Child("matchExpressions").Index(i)
		allErrs = append(allErrs, metav1validation.ValidateLabelName(req.Key, reqPath.Child("key"))...)
		allErrs = append(allErrs, validateNodeOperator(req.Operator, req.Values, reqPath)...)
	}
	for i, req := range term.MatchFields {
		reqPath := fldPath.Child("matchFields").Index(i)
		if req.Key != "metadata.name" {
			allErrs = append(allErrs, field.NotSupported(reqPath.Child("key"), req.Key, []string{"metadata.name"}))
		}
		if req.Operator != corev1.NodeSelectorOpIn && req.Operator != corev1.NodeSelectorOpNotIn {
			allErrs = append(allErrs, field.NotSupported(reqPath.Child("operator"), req.Operator, []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn}))
		} else if len(req.Values) != 1 {
			allErrs = append(allErrs, field.Invalid(reqPath.Child("values"), req.Values, "must have exactly one value"))
		}
	}
	return allErrs
}

func validateNodeOperator(op corev1.NodeSelectorOperator, values []string, fldPath *field.Path) field.ErrorList {
	valuesPath := fldPath.Child("values")
	switch op {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(values) == 0 {
			return field.ErrorList{field.Required(valuesPath, "must be specified when operator is In or NotIn")}
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(values) > 0 {
			return field.ErrorList{field.Forbidden(valuesPath, "may not be specified when operator is Exists or DoesNotExist")}
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(values) != 1 {
			return field.ErrorList{field.Required(valuesPath, "must be one integer when operator is Gt or Lt")}
		}
	default:
		return field.ErrorList{field.NotSupported(fldPath.Child("operator"), op, sets.List(supportedNodeOperators))}
	}
	return nil
}

func validatePodAffinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i := range required {
		allErrs = append(allErrs, validatePodAffinityTerm(&required[i], fldPath.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
	}
	for i := range preferred {
		prefPath := fldPath.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		allErrs = append(allErrs, validateWeight(preferred[i].Weight, prefPath.Child("weight"))...)
		allErrs = append(allErrs, validatePodAffinityTerm(&preferred[i].PodAffinityTerm, prefPath.Child("podAffinityTerm"))...)
	}
	return allErrs
}

func validatePodAffinityTerm(term *corev1.PodAffinityTerm, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if term.TopologyKey == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("topologyKey"), "e.g. kubernetes.io/hostname"))
	} else {
		allErrs = append(allErrs, metav1validation.ValidateLabelName(term.TopologyKey, fldPath.Child("topologyKey"))...)
	}
	opts := metav1validation.LabelSelectorValidationOptions{}
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(term.LabelSelector, opts, fldPath.Child("labelSelector"))...)
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(term.NamespaceSelector, opts, fldPath.Child("namespaceSelector"))...)
	for i, ns := range term.Namespaces {
		for _, msg := range validation.IsDNS1123Label(ns) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("namespaces").Index(i), ns, msg))
		}
	}
	return allErrs
}

func validateWeight(w int32, fldPath *field.Path) field.ErrorList {
	if w < 1 || w > 100 {
		return field.ErrorList{field.Invalid(fldPath, w, "must be in the range 1-100")}
	}
	return nil
}

func validateTopologySpread(constraints []corev1.TopologySpreadConstraint, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for i, c := range constraints {
		idxPath := fldPath.Index(i)
		if c.MaxSkew <= 0 {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("topologyKey"), "e.g. topology.kubernetes.io/zone"))
		} else {
			allErrs = append(allErrs, metav1validation.ValidateLabelName(c.TopologyKey, idxPath.Child("topologyKey"))...)
		}
		if !supportedUnsatisfiable.Has(c.WhenUnsatisfiable) {
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, sets.List(supportedUnsatisfiable)))
		}
		key := fmt.Sprintf("%s/%s", c.TopologyKey, c.WhenUnsatisfiable)
		if seen.Has(key) {
			allErrs = append(allErrs, field.Duplicate(idxPath, key))
		}
		seen.Insert(key)
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("minDomains"), *c.MinDomains, "must be greater than zero"))
			} else if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("minDomains"), *c.MinDomains, "may only be set when whenUnsatisfiable is DoNotSchedule"))
			}
		}
		for _, p := range []struct {
			policy *corev1.NodeInclusionPolicy
			name   string
		}{{c.NodeAffinityPolicy, "nodeAffinityPolicy"}, {c.NodeTaintsPolicy, "nodeTaintsPolicy"}} {
			if p.policy != nil && !supportedInclusionPolicies.Has(*p.policy) {
				allErrs = append(allErrs, field.NotSupported(idxPath.Child(p.name), *p.policy, sets.List(supportedInclusionPolicies)))
			}
		}
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, idxPath.Child("labelSelector"))...)
		for j, key := range c.MatchLabelKeys {
			allErrs = append(allErrs, metav1validation.ValidateLabelName(key, idxPath.Child("matchLabelKeys").Index(j))...)
		}
	}
	return allErrs
}

// validatePodSecurityContext checks ids and profiles of the pod security context.
func validatePodSecurityContext(sc *corev1.PodSecurityContext, fldPath *field.Path) field.ErrorList {
	allErrs := validateIdentity(sc.RunAsUser, sc.RunAsGroup, sc.RunAsNonRoot, sc.SeccompProfile, sc.AppArmorProfile, fldPath)
	if sc.FSGroup != nil {
		allErrs = append(allErrs, validateID(*sc.FSGroup, fldPath.Child("fsGroup"))...)
	}
	for i, g := range sc.SupplementalGroups {
		allErrs = append(allErrs, validateID(g, fldPath.Child("supplementalGroups").Index(i))...)
	}
	return allErrs
}

// validateSecurityContext checks the nginx container's security context.
func validateSecurityContext(sc *corev1.SecurityContext, fldPath *field.Path) field.ErrorList {
	allErrs := validateIdentity(sc.RunAsUser, sc.RunAsGroup, sc.RunAsNonRoot, sc.SeccompProfile, sc.AppArmorProfile, fldPath)
	if sc.ProcMount != nil && !supportedProcMounts.Has(*sc.ProcMount) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("procMount"), *sc.ProcMount, sets.List(supportedProcMounts)))
	}
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("allowPrivilegeEscalation"), false, "cannot be false when privileged is true"))
		}
		if sc.Capabilities != nil && sets.New(sc.Capabilities.Add...).Has("SYS_ADMIN") {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("allowPrivilegeEscalation"), false, "cannot be false when the SYS_ADMIN capability is added"))
		}
	}
	return allErrs
}

// validateIdentity checks what pod and container security contexts share: the user and
// group ids, runAsNonRoot against runAsUser, and the seccomp and AppArmor profiles.
func validateIdentity(runAsUser, runAsGroup *int64, runAsNonRoot *bool, seccomp *corev1.SeccompProfile, appArmor *corev1.AppArmorProfile, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if runAsUser != nil {
		allErrs = append(allErrs, validateID(*runAsUser, fldPath.Child("runAsUser"))...)
		if runAsNonRoot != nil && *runAsNonRoot && *runAsUser == 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("runAsUser"), 0, "must not be 0 when runAsNonRoot is true"))
		}
	}
	if runAsGroup != nil {
		allErrs = append(allErrs, validateID(*runAsGroup, fldPath.Child("runAsGroup"))...)
	}
	if seccomp != nil {
		allErrs = append(allErrs, validateSeccomp(seccomp, fldPath.Child("seccompProfile"))...)
	}
	if appArmor != nil {
		allErrs = append(allErrs, validateAppArmor(appArmor, fldPath.Child("appArmorProfile"))...)
	}
	return allErrs
}

// validateAppArmor refuses what kube-apiserver would refuse in the Deployment, where the
// refusal would reach only status.
func validateAppArmor(p *corev1.AppArmorProfile, fldPath *field.Path) field.ErrorList {
	switch {
	case !supportedAppArmorTypes.Has(p.Type):
		return field.ErrorList{field.NotSupported(fldPath.Child("type"), p.Type, sets.List(supportedAppArmorTypes))}
	case p.Type == corev1.AppArmorProfileTypeLocalhost && (p.LocalhostProfile == nil || *p.LocalhostProfile == ""):
		return field.ErrorList{field.Required(fldPath.Child("localhostProfile"), "must be set when type is Localhost")}
	case p.Type != corev1.AppArmorProfileTypeLocalhost && p.LocalhostProfile != nil:
		return field.ErrorList{field.Invalid(fldPath.Child("localhostProfile"), *p.LocalhostProfile, "may only be set when type is Localhost")}
	}
	return nil
}

func validateID(id int64, fldPath *field.Path) field.ErrorList {
	if id < 0 || id > 2147483647 {
		return field.ErrorList{field.Invalid(fldPath, id, "must be between 0 and 2147483647, inclusive")}
	}
	return nil
}

func validateSeccomp(p *corev1.SeccompProfile, fldPath *field.Path) field.ErrorList {
	switch {
	case !supportedSeccompTypes.Has(p.Type):
		return field.ErrorList{field.NotSupported(fldPath.Child("type"), p.Type, sets.List(supportedSeccompTypes))}
	case p.Type == corev1.SeccompProfileTypeLocalhost && (p.LocalhostProfile == nil || *p.LocalhostProfile == ""):
		return field.ErrorList{field.Required(fldPath.Child("localhostProfile"), "must be set when type is Localhost")}
	case p.Type != corev1.SeccompProfileTypeLocalhost && p.LocalhostProfile != nil:
		return field.ErrorList{field.Invalid(fldPath.Child("localhostProfile"), *p.LocalhostProfile, "may only be set when type is Localhost")}
	}
	return nil
}
