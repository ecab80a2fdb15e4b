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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// Bounds of the lists and maps of the spec. Every NginxOperator is stored, listed,
// watched, cached and reconciled in full, and every one shares the etcd quota with
// every tenant: nothing in it may grow without limit. The figures leave room for any
// reasonable nginx Deployment; those Gateway API sets for comparable lists guided them
// (64 listeners, 16 hostnames, 8 conditions). docs/api.md lists them all. spec.ports,
// spec.service.ports (MaxPorts), spec.files and spec.tls (MaxMounts) and spec.scratch
// (MaxScratch) have their own.
const (
	// MaxEnv bounds spec.env.
	MaxEnv = 128
	// MaxResourceNames bounds spec.resources.limits and requests each.
	MaxResourceNames = 16
	// MaxCapabilities bounds spec.securityContext.capabilities.add and drop each
	// (Linux has about 41 capabilities).
	MaxCapabilities = 64
	// MaxLabels bounds spec.pod.labels and spec.service.labels.
	MaxLabels = 64
	// MaxAnnotations bounds spec.pod.annotations and spec.service.annotations, which
	// also keep Kubernetes' limit of 256 KiB in all.
	MaxAnnotations = 64
	// MaxNodeSelector bounds spec.pod.nodeSelector.
	MaxNodeSelector = 16
	// MaxTolerations bounds spec.pod.tolerations.
	MaxTolerations = 64
	// MaxTopologySpreadConstraints bounds spec.pod.topologySpreadConstraints.
	MaxTopologySpreadConstraints = 16
	// MaxImagePullSecrets bounds spec.pod.imagePullSecrets.
	MaxImagePullSecrets = 16
	// MaxSysctls bounds spec.pod.securityContext.sysctls.
	MaxSysctls = 32
	// MaxSupplementalGroups bounds spec.pod.securityContext.supplementalGroups.
	MaxSupplementalGroups = 64
	// MaxLoadBalancerSourceRanges bounds spec.service.loadBalancerSourceRanges.
	MaxLoadBalancerSourceRanges = 128
	// MaxAffinityTerms bounds each list of terms of spec.pod.affinity: nodeSelectorTerms,
	// and the required and preferred terms of node affinity, pod affinity and pod
	// anti-affinity.
	MaxAffinityTerms = 16
	// MaxSelectorRequirements bounds the matchLabels, matchExpressions, matchFields,
	// matchLabelKeys and mismatchLabelKeys of every selector in spec.pod.
	MaxSelectorRequirements = 16
	// MaxSelectorValues bounds the values of one selector requirement and the namespaces
	// of a pod affinity term.
	MaxSelectorValues = 64
	// MaxConditions bounds status.conditions; the controller writes six.
	MaxConditions = 8
	// MaxConfigMapDigests bounds status.configMapDigests: spec.config's ConfigMap and
	// spec.files' twenty.
	MaxConfigMapDigests = 21
	// MaxCanaryPods bounds status.canary.pods; MaxCanaryMessage its message.
	MaxCanaryPods    = 100
	MaxCanaryMessage = 4096
)

// ValidateSpecBounds reports every list and map of the spec that is longer than its
// bound, with one error for the list (not one per item). Validation of the items is
// pointless while one is over: ValidateNginxOperator and ValidateNginxOperatorUpdate
// report only these errors then.
func ValidateSpecBounds(spec *operator.NginxOperatorSpec, fldPath *field.Path) field.ErrorList {
	b := bounds{}
	b.list(fldPath.Child("ports"), len(spec.Ports), MaxPorts)
	b.list(fldPath.Child("env"), len(spec.Env), MaxEnv)
	b.list(fldPath.Child("resources", "limits"), len(spec.Resources.Limits), MaxResourceNames)
	b.list(fldPath.Child("resources", "requests"), len(spec.Resources.Requests), MaxResourceNames)
	b.list(fldPath.Child("files"), len(spec.Files), MaxMounts)
	b.list(fldPath.Child("tls"), len(spec.TLS), MaxMounts)
	b.list(fldPath.Child("scratch"), len(spec.Scratch), MaxScratch)
	if spec.Config != nil && len(spec.Config.Inline) > MaxInlineConfigBytes {
		tooLong := field.TooLong(fldPath.Child("config", "inline"), "", MaxInlineConfigBytes)
		// Not shown (TooLong omits the value); compared by ratchet.
		tooLong.BadValue = len(spec.Config.Inline)
		b.errs = append(b.errs, tooLong)
	}
	if sc := spec.SecurityContext; sc != nil && sc.Capabilities != nil {
		capsPath := fldPath.Child("securityContext", "capabilities")
		b.list(capsPath.Child("add"), len(sc.Capabilities.Add), MaxCapabilities)
		b.list(capsPath.Child("drop"), len(sc.Capabilities.Drop), MaxCapabilities)
	}
	if svc := spec.Service; svc != nil {
		svcPath := fldPath.Child("service")
		b.list(svcPath.Child("ports"), len(svc.Ports), MaxPorts)
		b.list(svcPath.Child("labels"), len(svc.Labels), MaxLabels)
		b.list(svcPath.Child("annotations"), len(svc.Annotations), MaxAnnotations)
		b.list(svcPath.Child("loadBalancerSourceRanges"), len(svc.LoadBalancerSourceRanges), MaxLoadBalancerSourceRanges)
	}
	if pod := spec.Pod; pod != nil {
		b.pod(pod, fldPath.Child("pod"))
	}
	return b.errs
}

// bounds collects the errors of ValidateSpecBounds.
type bounds struct {
	errs field.ErrorList
}

func (b *bounds) list(fldPath *field.Path, n, max int) {
	if n > max {
		b.errs = append(b.errs, field.TooMany(fldPath, n, max))
	}
}

func (b *bounds) pod(pod *operator.PodOptions, fldPath *field.Path) {
	b.list(fldPath.Child("labels"), len(pod.Labels), MaxLabels)
	b.list(fldPath.Child("annotations"), len(pod.Annotations), MaxAnnotations)
	b.list(fldPath.Child("nodeSelector"), len(pod.NodeSelector), MaxNodeSelector)
	b.list(fldPath.Child("tolerations"), len(pod.Tolerations), MaxTolerations)
	b.list(fldPath.Child("imagePullSecrets"), len(pod.ImagePullSecrets), MaxImagePullSecrets)
	tscPath := fldPath.Child("topologySpreadConstraints")
	if !b.over(tscPath, len(pod.TopologySpreadConstraints), MaxTopologySpreadConstraints) {
		for i := range pod.TopologySpreadConstraints {
			c := &pod.TopologySpreadConstraints[i]
			idxPath := tscPath.Index(i)
			b.selector(c.LabelSelector, idxPath.Child("labelSelector"))
			b.list(idxPath.Child("matchLabelKeys"), len(c.MatchLabelKeys), MaxSelectorRequirements)
		}
	}
	if sc := pod.SecurityContext; sc != nil {
		scPath := fldPath.Child("securityContext")
		b.list(scPath.Child("sysctls"), len(sc.Sysctls), MaxSysctls)
		b.list(scPath.Child("supplementalGroups"), len(sc.SupplementalGroups), MaxSupplementalGroups)
	}
	if a := pod.Affinity; a != nil {
		b.affinity(a, fldPath.Child("affinity"))
	}
}

// over records an error when n is over max and says whether it did, so that the items
// of a list over its bound are not walked.
func (b *bounds) over(fldPath *field.Path, n, max int) bool {
	b.list(fldPath, n, max)
	return n > max
}

func (b *bounds) affinity(a *corev1.Affinity, fldPath *field.Path) {
	if na := a.NodeAffinity; na != nil {
		naPath := fldPath.Child("nodeAffinity")
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			termsPath := naPath.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			if !b.over(termsPath, len(req.NodeSelectorTerms), MaxAffinityTerms) {
				for i := range req.NodeSelectorTerms {
					b.nodeSelectorTerm(&req.NodeSelectorTerms[i], termsPath.Index(i))
				}
			}
		}
		prefPath := naPath.Child("preferredDuringSchedulingIgnoredDuringExecution")
		if !b.over(prefPath, len(na.PreferredDuringSchedulingIgnoredDuringExecution), MaxAffinityTerms) {
			for i := range na.PreferredDuringSchedulingIgnoredDuringExecution {
				b.nodeSelectorTerm(&na.PreferredDuringSchedulingIgnoredDuringExecution[i].Preference, prefPath.Index(i).Child("preference"))
			}
		}
	}
	if pa := a.PodAffinity; pa != nil {
		b.podAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, fldPath.Child("podAffinity"))
	}
	if pa := a.PodAntiAffinity; pa != nil {
		b.podAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, fldPath.Child("podAntiAffinity"))
	}
}

func (b *bounds) nodeSelectorTerm(term *corev1.NodeSelectorTerm, fldPath *field.Path) {
	for _, list := range []struct {
		name string
		reqs []corev1.NodeSelectorRequirement
	}{{"matchExpressions", term.MatchExpressions}, {"matchFields", term.MatchFields}} {
		listPath := fldPath.Child(list.name)
		if b.over(listPath, len(list.reqs), MaxSelectorRequirements) {
			continue
		}
		for i, req := range list.reqs {
			b.list(listPath.Index(i).Child("values"), len(req.Values), MaxSelectorValues)
		}
	}
}

func (b *bounds) podAffinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, fldPath *field.Path) {
	reqPath := fldPath.Child("requiredDuringSchedulingIgnoredDuringExecution")
	if !b.over(reqPath, len(required), MaxAffinityTerms) {
		for i := range required {
			b.podAffinityTerm(&required[i], reqPath.Index(i))
		}
	}
	prefPath := fldPath.Child("preferredDuringSchedulingIgnoredDuringExecution")
	if !b.over(prefPath, len(preferred), MaxAffinityTerms) {
		for i := range preferred {
			b.podAffinityTerm(&preferred[i].PodAffinityTerm, prefPath.Index(i).Child("podAffinityTerm"))
		}
	}
}

func (b *bounds) podAffinityTerm(term *corev1.PodAffinityTerm, fldPath *field.Path) {
	b.selector(term.LabelSelector, fldPath.Child("labelSelector"))
	b.selector(term.NamespaceSelector, fldPath.Child("namespaceSelector"))
	b.list(fldPath.Child("namespaces"), len(term.Namespaces), MaxSelectorValues)
	b.list(fldPath.Child("matchLabelKeys"), len(term.MatchLabelKeys), MaxSelectorRequirements)
	b.list(fldPath.Child("mismatchLabelKeys"), len(term.MismatchLabelKeys), MaxSelectorRequirements)
}

func (b *bounds) selector(sel *metav1.LabelSelector, fldPath *field.Path) {
	if sel == nil {
		return
	}
	b.list(fldPath.Child("matchLabels"), len(sel.MatchLabels), MaxSelectorRequirements)
	exprPath := fldPath.Child("matchExpressions")
	if b.over(exprPath, len(sel.MatchExpressions), MaxSelectorRequirements) {
		return
	}
	for i, req := range sel.MatchExpressions {
		b.list(exprPath.Index(i).Child("values"), len(req.Values), MaxSelectorValues)
	}
}

// ratchet drops from errs the errors old already had at the same field, unless the
// value grew: an update may keep what an earlier release let through (removing a
// finalizer or changing the image must not fail on an unchanged list), never make a
// list longer than it was once it is over its bound, nor add a new violation.
func ratchet(errs, old field.ErrorList) field.ErrorList {
	if len(errs) == 0 || len(old) == 0 {
		return errs
	}
	before := make(map[string]*field.Error, len(old))
	for _, e := range old {
		before[ratchetKey(e)] = e
	}
	var kept field.ErrorList
	for _, e := range errs {
		if o, found := before[ratchetKey(e)]; found && !grew(e, o) {
			continue
		}
		kept = append(kept, e)
	}
	return kept
}

func ratchetKey(e *field.Error) string {
	return fmt.Sprintf("%s\x00%s\x00%s", e.Type, e.Field, e.Detail)
}

// grew compares the sizes that TooMany and ValidateSpecBounds' TooLong errors carry;
// other errors carry no size to compare.
func grew(e, old *field.Error) bool {
	n, ok := e.BadValue.(int)
	o, oldOK := old.BadValue.(int)
	return ok && oldOK && n > o
}
