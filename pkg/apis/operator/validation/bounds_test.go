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
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

// boundCase sets n valid, distinct items at path.
type boundCase struct {
	path string
	max  int
	set  func(o *operator.NginxOperator, n int)
}

func keys(prefix string, n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m[fmt.Sprintf("%s%d", prefix, i)] = "v"
	}
	return m
}

func names(prefix string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return s
}

func pod(o *operator.NginxOperator) *operator.PodOptions {
	if o.Spec.Pod == nil {
		o.Spec.Pod = &operator.PodOptions{}
	}
	return o.Spec.Pod
}

func affinity(o *operator.NginxOperator) *corev1.Affinity {
	p := pod(o)
	if p.Affinity == nil {
		p.Affinity = &corev1.Affinity{}
	}
	return p.Affinity
}

func requiredNodeTerms(o *operator.NginxOperator, terms ...corev1.NodeSelectorTerm) {
	affinity(o).NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}
}

func existsTerm() corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "k", Operator: corev1.NodeSelectorOpExists}}}
}

func podTerm() corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
}

func requiredPodTerms(o *operator.NginxOperator, terms ...corev1.PodAffinityTerm) {
	affinity(o).PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}
}

func selectorRequirements(n int, values int) []metav1.LabelSelectorRequirement {
	reqs := make([]metav1.LabelSelectorRequirement, n)
	for i := range reqs {
		reqs[i] = metav1.LabelSelectorRequirement{Key: fmt.Sprintf("k%d", i), Operator: metav1.LabelSelectorOpIn, Values: names("v", max(values, 1))}
	}
	return reqs
}

func extendedResources(n int) corev1.ResourceList {
	list := corev1.ResourceList{}
	for i := range n {
		list[corev1.ResourceName(fmt.Sprintf("example.com/r%d", i))] = resource.MustParse("1")
	}
	return list
}

var boundCases = []boundCase{
	{"spec.ports", MaxPorts, func(o *operator.NginxOperator, n int) {
		setPorts(o, n)
		o.Spec.Service.Ports = o.Spec.Service.Ports[:1]
	}},
	{"spec.service.ports", MaxPorts, func(o *operator.NginxOperator, n int) {
		setPorts(o, MaxPorts)
		for i := MaxPorts; i < n; i++ { // a second Service port of the first container port
			o.Spec.Service.Ports = append(o.Spec.Service.Ports, operator.ServicePort{Name: "p0", Port: int32(1000 + i)})
		}
	}},
	{"spec.env", MaxEnv, func(o *operator.NginxOperator, n int) {
		o.Spec.Env = nil
		for _, name := range names("E", n) {
			o.Spec.Env = append(o.Spec.Env, corev1.EnvVar{Name: name, Value: "1"})
		}
	}},
	{"spec.resources.limits", MaxResourceNames, func(o *operator.NginxOperator, n int) {
		o.Spec.Resources = corev1.ResourceRequirements{Limits: extendedResources(n)}
	}},
	{"spec.resources.requests", MaxResourceNames, func(o *operator.NginxOperator, n int) {
		o.Spec.Resources = corev1.ResourceRequirements{Limits: extendedResources(min(n, MaxResourceNames)), Requests: extendedResources(n)}
	}},
	{"spec.files", MaxMounts, func(o *operator.NginxOperator, n int) {
		for i := range n {
			o.Spec.Files = append(o.Spec.Files, operator.ConfigMapFiles{ConfigMapName: fmt.Sprintf("c%d", i), MountPath: fmt.Sprintf("/srv/f%d", i)})
		}
	}},
	{"spec.tls", MaxMounts, func(o *operator.NginxOperator, n int) {
		for _, name := range names("s", n) {
			o.Spec.TLS = append(o.Spec.TLS, operator.TLSSecret{SecretName: name})
		}
	}},
	{"spec.scratch", MaxScratch, func(o *operator.NginxOperator, n int) {
		for _, name := range names("s", n) {
			o.Spec.Scratch = append(o.Spec.Scratch, operator.ScratchVolume{Name: name, MountPath: "/var/cache/" + name, SizeLimit: resource.MustParse("1Gi")})
		}
	}},
	{"spec.securityContext.capabilities.add", MaxCapabilities, func(o *operator.NginxOperator, n int) {
		o.Spec.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{}}
		for _, name := range names("CAP_", n) {
			o.Spec.SecurityContext.Capabilities.Add = append(o.Spec.SecurityContext.Capabilities.Add, corev1.Capability(name))
		}
	}},
	{"spec.securityContext.capabilities.drop", MaxCapabilities, func(o *operator.NginxOperator, n int) {
		o.Spec.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{}}
		for _, name := range names("CAP_", n) {
			o.Spec.SecurityContext.Capabilities.Drop = append(o.Spec.SecurityContext.Capabilities.Drop, corev1.Capability(name))
		}
	}},
	{"spec.service.labels", MaxLabels, func(o *operator.NginxOperator, n int) { o.Spec.Service.Labels = keys("l", n) }},
	{"spec.service.annotations", MaxAnnotations, func(o *operator.NginxOperator, n int) { o.Spec.Service.Annotations = keys("a", n) }},
	{"spec.service.loadBalancerSourceRanges", MaxLoadBalancerSourceRanges, func(o *operator.NginxOperator, n int) {
		o.Spec.Service.Type = operator.ServiceTypeLoadBalancer
		for i := range n {
			o.Spec.Service.LoadBalancerSourceRanges = append(o.Spec.Service.LoadBalancerSourceRanges, fmt.Sprintf("10.%d.%d.0/24", i/256, i%256))
		}
	}},
	{"spec.pod.labels", MaxLabels, func(o *operator.NginxOperator, n int) { pod(o).Labels = keys("l", n) }},
	{"spec.pod.annotations", MaxAnnotations, func(o *operator.NginxOperator, n int) { pod(o).Annotations = keys("a", n) }},
	{"spec.pod.nodeSelector", MaxNodeSelector, func(o *operator.NginxOperator, n int) { pod(o).NodeSelector = keys("n", n) }},
	{"spec.pod.tolerations", MaxTolerations, func(o *operator.NginxOperator, n int) {
		for _, key := range names("t", n) {
			pod(o).Tolerations = append(pod(o).Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists})
		}
	}},
	{"spec.pod.imagePullSecrets", MaxImagePullSecrets, func(o *operator.NginxOperator, n int) {
		for _, name := range names("s", n) {
			pod(o).ImagePullSecrets = append(pod(o).ImagePullSecrets, corev1.LocalObjectReference{Name: name})
		}
	}},
	{"spec.pod.topologySpreadConstraints", MaxTopologySpreadConstraints, func(o *operator.NginxOperator, n int) {
		for _, key := range names("example.com/t", n) {
			pod(o).TopologySpreadConstraints = append(pod(o).TopologySpreadConstraints, corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule})
		}
	}},
	{"spec.pod.topologySpreadConstraints[0].matchLabelKeys", MaxSelectorRequirements, func(o *operator.NginxOperator, n int) {
		pod(o).TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule, MatchLabelKeys: names("k", n)}}
	}},
	{"spec.pod.topologySpreadConstraints[0].labelSelector.matchLabels", MaxSelectorRequirements, func(o *operator.NginxOperator, n int) {
		pod(o).TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: keys("k", n)}}}
	}},
	{"spec.pod.securityContext.sysctls", MaxSysctls, func(o *operator.NginxOperator, n int) {
		pod(o).SecurityContext = &corev1.PodSecurityContext{}
		for _, name := range names("net.core.s", n) {
			pod(o).SecurityContext.Sysctls = append(pod(o).SecurityContext.Sysctls, corev1.Sysctl{Name: name, Value: "1"})
		}
	}},
	{"spec.pod.securityContext.supplementalGroups", MaxSupplementalGroups, func(o *operator.NginxOperator, n int) {
		pod(o).SecurityContext = &corev1.PodSecurityContext{}
		for i := range n {
			pod(o).SecurityContext.SupplementalGroups = append(pod(o).SecurityContext.SupplementalGroups, int64(1000+i))
		}
	}},
	{"spec.pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms", MaxAffinityTerms, func(o *operator.NginxOperator, n int) {
		terms := make([]corev1.NodeSelectorTerm, n)
		for i := range terms {
			terms[i] = existsTerm()
		}
		requiredNodeTerms(o, terms...)
	}},
	{"spec.pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions", MaxSelectorRequirements, func(o *operator.NginxOperator, n int) {
		term := corev1.NodeSelectorTerm{}
		for _, key := range names("k", n) {
			term.MatchExpressions = append(term.MatchExpressions, corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpExists})
		}
		requiredNodeTerms(o, term)
	}},
	{"spec.pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values", MaxSelectorValues, func(o *operator.NginxOperator, n int) {
		requiredNodeTerms(o, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: names("z", n)}}})
	}},
	{"spec.pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields", MaxSelectorRequirements, func(o *operator.NginxOperator, n int) {
		term := corev1.NodeSelectorTerm{}
		for _, name := range names("node", n) {
			term.MatchFields = append(term.MatchFields, corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{name}})
		}
		requiredNodeTerms(o, term)
	}},
	{"spec.pod.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution", MaxAffinityTerms, func(o *operator.NginxOperator, n int) {
		na := &corev1.NodeAffinity{}
		for range n {
			na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, corev1.PreferredSchedulingTerm{Weight: 1, Preference: existsTerm()})
		}
		affinity(o).NodeAffinity = na
	}},
	{"spec.pod.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution", MaxAffinityTerms, func(o *operator.NginxOperator, n int) {
		terms := make([]corev1.PodAffinityTerm, n)
		for i := range terms {
			terms[i] = podTerm()
		}
		requiredPodTerms(o, terms...)
	}},
	{"spec.pod.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchLabels", MaxSelectorRequirements, func(o *operator.NginxOperator, n int) {
		term := podTerm()
		term.LabelSelector.MatchLabels = keys("k", n)
		requiredPodTerms(o, term)
	}},
	{"spec.pod.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions", MaxSelectorRequirements, func(o *operator.NginxOperator, n int) {
		term := podTerm()
		term.LabelSelector.MatchExpressions = selectorRequirements(n, 1)
		requiredPodTerms(o, term)
	}},
	{"spec.pod.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].values", MaxSelectorValues, func(o *operator.NginxOperator, n int) {
		term := podTerm()
		term.LabelSelector.MatchExpressions = selectorRequirements(1, n)
		requiredPodTerms(o, term)
	}},
	{"spec.pod.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector.matchLabels", MaxSelectorRequirements, func(o *operator.NginxOperator, n int) {
		term := podTerm()
		term.NamespaceSelector = &metav1.LabelSelector{MatchLabels: keys("k", n)}
		requiredPodTerms(o, term)
	}},
	{"spec.pod.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaces", MaxSelectorValues, func(o *operator.NginxOperator, n int) {
		term := podTerm()
		term.Namespaces = names("ns", n)
		requiredPodTerms(o, term)
	}},
	{"spec.pod.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys", MaxSelectorRequirements, func(o *operator.NginxOperator, n int) {
		term := podTerm()
		term.MatchLabelKeys = names("k", n)
		requiredPodTerms(o, term)
	}},
	{"spec.pod.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].mismatchLabelKeys", MaxSelectorRequirements, func(o *operator.NginxOperator, n int) {
		term := podTerm()
		term.MismatchLabelKeys = names("k", n)
		requiredPodTerms(o, term)
	}},
	{"spec.pod.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution", MaxAffinityTerms, func(o *operator.NginxOperator, n int) {
		pa := &corev1.PodAffinity{}
		for range n {
			pa.PreferredDuringSchedulingIgnoredDuringExecution = append(pa.PreferredDuringSchedulingIgnoredDuringExecution, corev1.WeightedPodAffinityTerm{Weight: 1, PodAffinityTerm: podTerm()})
		}
		affinity(o).PodAffinity = pa
	}},
	{"spec.pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution", MaxAffinityTerms, func(o *operator.NginxOperator, n int) {
		terms := make([]corev1.PodAffinityTerm, n)
		for i := range terms {
			terms[i] = podTerm()
		}
		affinity(o).PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}
	}},
	{"spec.pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector.matchLabels", MaxSelectorRequirements, func(o *operator.NginxOperator, n int) {
		term := podTerm()
		term.LabelSelector.MatchLabels = keys("k", n)
		affinity(o).PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: term}}}
	}},
}

// TestBounds accepts every list and map at its bound and refuses one item more, with
// one error naming the list.
func TestBounds(t *testing.T) {
	for _, tc := range boundCases {
		t.Run(tc.path, func(t *testing.T) {
			atBound := validObject()
			tc.set(atBound, tc.max)
			assertErrors(t, ValidateNginxOperator(atBound), nil)

			over := validObject()
			tc.set(over, tc.max+1)
			errs := ValidateNginxOperator(over)
			assertErrors(t, errs, []string{"FieldValueTooMany " + tc.path})
			if len(errs) == 1 && !strings.Contains(errs[0].Error(), fmt.Sprintf("must have at most %d items", tc.max)) {
				t.Errorf("message %q does not give the bound", errs[0].Error())
			}
		})
	}
}

// TestEveryListOfTheSpecIsBounded walks every field of the spec, the Kubernetes types
// it embeds included, and fills each list and map in turn with far more items than any
// bound: ValidateSpecBounds must refuse every one at its path. A list or map added to
// the spec without a bound fails here.
func TestEveryListOfTheSpecIsBounded(t *testing.T) {
	const n = 1000
	exempt := map[string]string{
		"spec.resources.claims": "refused whatever its length: resource claims are not supported",
	}
	paths := listPaths(reflect.TypeOf(operator.NginxOperatorSpec{}), nil)
	if len(paths) < 40 {
		t.Fatalf("found only %d lists and maps in the spec: the walk is broken", len(paths))
	}
	for _, path := range paths {
		name := path.String()
		if exempt[name] != "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			spec := operator.NginxOperatorSpec{}
			fill(reflect.ValueOf(&spec).Elem(), path, n)
			want := strings.ReplaceAll(name, "[*]", "[0]")
			for _, err := range ValidateSpecBounds(&spec, field.NewPath("spec")) {
				if err.Type == field.ErrorTypeTooMany && err.Field == want {
					return
				}
			}
			t.Errorf("%d items at %s are not refused by ValidateSpecBounds", n, want)
		})
	}
}

// segment is one step of a path: a struct field or, when goName is empty, a list item.
type segment struct{ goName, jsonName string }

type specPath []segment

func (p specPath) String() string {
	var b strings.Builder
	b.WriteString("spec")
	for _, s := range p {
		if s.goName == "" {
			b.WriteString("[*]")
		} else {
			b.WriteString("." + s.jsonName)
		}
	}
	return b.String()
}

// listPaths lists the paths of every slice and map below t.
func listPaths(t reflect.Type, prefix specPath) []specPath {
	if len(prefix) > 12 {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var paths []specPath
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		path := append(append(specPath{}, prefix...), segment{f.Name, jsonName(f)})
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch ft.Kind() {
		case reflect.Slice:
			paths = append(paths, path)
			paths = append(paths, listPaths(ft.Elem(), append(path, segment{}))...)
		case reflect.Map:
			paths = append(paths, path)
		case reflect.Struct:
			paths = append(paths, listPaths(ft, path)...)
		}
	}
	return paths
}

// jsonName is the wire name: the json tag of Kubernetes types, the lower-cased Go name
// of the internal types ("TLS" is "tls", "HealthcheckPath" "healthcheckPath").
func jsonName(f reflect.StructField) string {
	if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" {
		return tag
	}
	if strings.ToUpper(f.Name) == f.Name {
		return strings.ToLower(f.Name)
	}
	return strings.ToLower(f.Name[:1]) + f.Name[1:]
}

// fill allocates what path goes through (one item per list on the way) and puts n
// items in the list or map at its end.
func fill(v reflect.Value, path specPath, n int) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	if len(path) == 0 {
		switch v.Kind() {
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), n, n))
		case reflect.Map:
			m := reflect.MakeMapWithSize(v.Type(), n)
			for i := range n {
				m.SetMapIndex(reflect.ValueOf(fmt.Sprintf("k%d", i)).Convert(v.Type().Key()), reflect.Zero(v.Type().Elem()))
			}
			v.Set(m)
		}
		return
	}
	if path[0].goName == "" {
		if v.Len() == 0 {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		}
		fill(v.Index(0), path[1:], n)
		return
	}
	fill(v.FieldByName(path[0].goName), path[1:], n)
}

func TestInlineConfigBound(t *testing.T) {
	atBound := validObject()
	atBound.Spec.Config = &operator.ConfigSource{Inline: strings.Repeat("#", MaxInlineConfigBytes)}
	assertErrors(t, ValidateNginxOperator(atBound), nil)
	over := validObject()
	over.Spec.Config = &operator.ConfigSource{Inline: strings.Repeat("#", MaxInlineConfigBytes+1)}
	assertErrors(t, ValidateNginxOperator(over), []string{"FieldValueTooLong spec.config.inline"})
}

func TestConditionsBound(t *testing.T) {
	now := metav1.Now()
	o := validObject()
	for i := range MaxConditions + 1 {
		o.Status.Conditions = append(o.Status.Conditions, metav1.Condition{Type: fmt.Sprintf("C%d", i), Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: now})
	}
	assertErrors(t, ValidateNginxOperatorStatusUpdate(o, validObject()), []string{"FieldValueTooMany status.conditions"})
	o.Status.Conditions = o.Status.Conditions[:MaxConditions]
	assertErrors(t, ValidateNginxOperatorStatusUpdate(o, validObject()), nil)
}

// TestBoundsRatchet: an object stored before the bounds keeps working through updates
// that do not make it worse, a finalizer's removal included.
func TestBoundsRatchet(t *testing.T) {
	setEnv := func(o *operator.NginxOperator, n int) { boundCases[2].set(o, n) }
	old := validObject()
	setEnv(old, MaxEnv+10)

	same := old.DeepCopy()
	same.Finalizers = []string{"example.com/keep"}
	same.Spec.Image = "nginx:1.27.5"
	assertErrors(t, ValidateNginxOperatorUpdate(same, old), nil)

	shorter := old.DeepCopy()
	setEnv(shorter, MaxEnv+5)
	assertErrors(t, ValidateNginxOperatorUpdate(shorter, old), nil)

	longer := old.DeepCopy()
	setEnv(longer, MaxEnv+11)
	assertErrors(t, ValidateNginxOperatorUpdate(longer, old), []string{"FieldValueTooMany spec.env"})

	// Items of a ratcheted list are still validated.
	invalidItem := old.DeepCopy()
	invalidItem.Spec.Env[0].Name = ""
	assertErrors(t, ValidateNginxOperatorUpdate(invalidItem, old), []string{"FieldValueRequired spec.env[0].name"})

	// Another list going over is refused.
	other := old.DeepCopy()
	other.Spec.Service.Labels = keys("l", MaxLabels+1)
	assertErrors(t, ValidateNginxOperatorUpdate(other, old), []string{"FieldValueTooMany spec.service.labels"})

	// A long inline config is kept, not grown.
	oldConfig := validObject()
	oldConfig.Spec.Config = &operator.ConfigSource{Inline: strings.Repeat("#", 200*1024)}
	keptConfig := oldConfig.DeepCopy()
	keptConfig.Spec.Replicas = ptr.To[int32](5)
	assertErrors(t, ValidateNginxOperatorUpdate(keptConfig, oldConfig), nil)
	grownConfig := oldConfig.DeepCopy()
	grownConfig.Spec.Config.Inline += "#"
	assertErrors(t, ValidateNginxOperatorUpdate(grownConfig, oldConfig), []string{"FieldValueTooLong spec.config.inline"})
}

func TestRequiredAntiAffinityStaysInItsNamespace(t *testing.T) {
	antiAffinity := func(o *operator.NginxOperator, term corev1.PodAffinityTerm, preferred bool) {
		if preferred {
			affinity(o).PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 10, PodAffinityTerm: term}}}
			return
		}
		affinity(o).PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}
	}
	const required = "spec.pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
	cases := []struct {
		name      string
		mutate    func(*corev1.PodAffinityTerm)
		preferred bool
		want      []string
	}{
		{name: "own namespace implicitly", mutate: func(*corev1.PodAffinityTerm) {}},
		{name: "own namespace by name", mutate: func(term *corev1.PodAffinityTerm) { term.Namespaces = []string{"default"} }},
		{name: "another namespace", mutate: func(term *corev1.PodAffinityTerm) { term.Namespaces = []string{"default", "other"} },
			want: []string{"FieldValueForbidden " + required + ".namespaces[1]"}},
		{name: "every namespace", mutate: func(term *corev1.PodAffinityTerm) { term.NamespaceSelector = &metav1.LabelSelector{} },
			want: []string{"FieldValueForbidden " + required + ".namespaceSelector"}},
		{name: "namespaces by label", mutate: func(term *corev1.PodAffinityTerm) {
			term.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
		}, want: []string{"FieldValueForbidden " + required + ".namespaceSelector"}},
		{name: "preferred across namespaces", preferred: true, mutate: func(term *corev1.PodAffinityTerm) {
			term.NamespaceSelector = &metav1.LabelSelector{}
			term.Namespaces = []string{"other"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := validObject()
			term := podTerm()
			tc.mutate(&term)
			antiAffinity(o, term, tc.preferred)
			errs := ValidateNginxOperator(o)
			assertErrors(t, errs, tc.want)
			if len(errs) > 0 && !strings.Contains(errs.ToAggregate().Error(), "other tenants") {
				t.Errorf("the message does not say why: %v", errs.ToAggregate())
			}
		})
	}

	// Stored before the rule: updates that keep the term go through.
	old := validObject()
	term := podTerm()
	term.NamespaceSelector = &metav1.LabelSelector{}
	antiAffinity(old, term, false)
	updated := old.DeepCopy()
	updated.Spec.Replicas = ptr.To[int32](4)
	assertErrors(t, ValidateNginxOperatorUpdate(updated, old), nil)
}

func TestPodDisruptionBudgetMustAllowDisruptions(t *testing.T) {
	intOrString := func(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }
	cases := []struct {
		name     string
		pdb      operator.PodDisruptionBudgetSpec
		replicas int32
		qps      *operator.QPSSpec
		want     []string
		warning  string
	}{
		{name: "maxUnavailable 1", pdb: operator.PodDisruptionBudgetSpec{MaxUnavailable: intOrString("1")}, replicas: 2},
		{name: "maxUnavailable 10%", pdb: operator.PodDisruptionBudgetSpec{MaxUnavailable: intOrString("10%")}, replicas: 2},
		{name: "maxUnavailable 0", pdb: operator.PodDisruptionBudgetSpec{MaxUnavailable: intOrString("0")}, replicas: 2,
			want: []string{"FieldValueInvalid spec.podDisruptionBudget.maxUnavailable"}},
		{name: "maxUnavailable 0%", pdb: operator.PodDisruptionBudgetSpec{MaxUnavailable: intOrString("0%")}, replicas: 2,
			want: []string{"FieldValueInvalid spec.podDisruptionBudget.maxUnavailable"}},
		{name: "minAvailable 100%", pdb: operator.PodDisruptionBudgetSpec{MinAvailable: intOrString("100%")}, replicas: 2,
			want: []string{"FieldValueInvalid spec.podDisruptionBudget.minAvailable"}},
		{name: "minAvailable below replicas", pdb: operator.PodDisruptionBudgetSpec{MinAvailable: intOrString("1")}, replicas: 2},
		{name: "minAvailable 50% of 2", pdb: operator.PodDisruptionBudgetSpec{MinAvailable: intOrString("50%")}, replicas: 2},
		{name: "minAvailable equal to replicas", pdb: operator.PodDisruptionBudgetSpec{MinAvailable: intOrString("2")}, replicas: 2,
			warning: "minAvailable: 2 requires 2 of the 2 desired pods"},
		{name: "minAvailable above replicas", pdb: operator.PodDisruptionBudgetSpec{MinAvailable: intOrString("5")}, replicas: 2,
			warning: "minAvailable: 5 requires 5 of the 2 desired pods"},
		{name: "minAvailable 60% of 2 rounds up to 2", pdb: operator.PodDisruptionBudgetSpec{MinAvailable: intOrString("60%")}, replicas: 2,
			warning: "minAvailable: 60% requires 2 of the 2 desired pods"},
		{name: "minAvailable with zero replicas", pdb: operator.PodDisruptionBudgetSpec{MinAvailable: intOrString("1")}, replicas: 0},
		{name: "minAvailable at the QPS count", pdb: operator.PodDisruptionBudgetSpec{MinAvailable: intOrString("3")},
			qps: &operator.QPSSpec{SinglePodQPS: 100, TotalQPS: 250}, warning: "of the 3 desired pods"},
		{name: "minAvailable below the QPS count", pdb: operator.PodDisruptionBudgetSpec{MinAvailable: intOrString("2")},
			qps: &operator.QPSSpec{SinglePodQPS: 100, TotalQPS: 250}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := validObject()
			o.Spec.Replicas = ptr.To(tc.replicas)
			if tc.qps != nil {
				o.Spec.Replicas, o.Spec.QPS = nil, tc.qps
			}
			o.Spec.PodDisruptionBudget = &tc.pdb
			errs := ValidateNginxOperator(o)
			assertErrors(t, errs, tc.want)
			if len(errs) > 0 && !strings.Contains(errs.ToAggregate().Error(), "blocks every node drain") {
				t.Errorf("the message does not say why: %v", errs.ToAggregate())
			}
			warnings := strings.Join(WarningsForNginxOperator(o), "\n")
			if tc.warning == "" && warnings != "" || !strings.Contains(warnings, tc.warning) {
				t.Errorf("warnings %q; want %q", warnings, tc.warning)
			}
		})
	}

	old := validObject()
	old.Spec.PodDisruptionBudget = &operator.PodDisruptionBudgetSpec{MaxUnavailable: intOrString("0")}
	kept := old.DeepCopy()
	kept.Spec.Image = "nginx:1.27.5"
	assertErrors(t, ValidateNginxOperatorUpdate(kept, old), nil)
	fresh := validObject()
	fresh.Spec.PodDisruptionBudget = &operator.PodDisruptionBudgetSpec{MaxUnavailable: intOrString("0")}
	assertErrors(t, ValidateNginxOperatorUpdate(fresh, validObject()), []string{"FieldValueInvalid spec.podDisruptionBudget.maxUnavailable"})
}
