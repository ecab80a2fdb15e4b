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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/example/nginx-operator/pkg/apis/operator"
)

func cache() operator.ScratchVolume {
	return operator.ScratchVolume{Name: "cache", MountPath: "/var/cache/nginx/proxy", SizeLimit: resource.MustParse("1Gi")}
}

func TestValidateScratch(t *testing.T) {
	withScratch := func(vs ...operator.ScratchVolume) func(o *operator.NginxOperator) {
		return func(o *operator.NginxOperator) { o.Spec.Scratch = vs }
	}
	with := func(mutate func(v *operator.ScratchVolume)) operator.ScratchVolume {
		v := cache()
		mutate(&v)
		return v
	}
	cases := []struct {
		name   string
		mutate func(o *operator.NginxOperator)
		want   []string
	}{
		{name: "a cache on disk and a temp directory in memory", mutate: withScratch(cache(), operator.ScratchVolume{
			Name: "tmp", MountPath: "/tmp", Medium: corev1.StorageMediumMemory, SizeLimit: resource.MustParse("64Mi")})},
		{name: "at the maxima", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.SizeLimit = resource.MustParse("64Gi") }),
			operator.ScratchVolume{Name: "tmp", MountPath: "/tmp", Medium: corev1.StorageMediumMemory, SizeLimit: resource.MustParse("16Gi")})},
		{name: "name of 55 characters", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.Name = strings.Repeat("a", 55) }))},
		{name: "a sibling of spec.files", mutate: func(o *operator.NginxOperator) {
			o.Spec.Files = []operator.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/var/cache/nginx/html"}}
			o.Spec.Scratch = []operator.ScratchVolume{cache()}
		}},
		{name: "a path that only starts like nginx's configuration directory", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.MountPath = "/etc/nginx-cache" }))},

		{name: "name missing", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.Name = "" })), want: []string{"FieldValueRequired spec.scratch[0].name"}},
		{name: "name not a DNS label", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.Name = "Cache.1" })), want: []string{"FieldValueInvalid spec.scratch[0].name"}},
		{name: "name too long for the volume name", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.Name = strings.Repeat("a", 56) })), want: []string{"FieldValueTooLong spec.scratch[0].name"}},
		{name: "duplicate name", mutate: withScratch(cache(), with(func(v *operator.ScratchVolume) { v.MountPath = "/tmp" })), want: []string{"FieldValueDuplicate spec.scratch[1].name"}},

		{name: "mountPath missing", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.MountPath = "" })), want: []string{"FieldValueRequired spec.scratch[0].mountPath"}},
		{name: "mountPath relative", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.MountPath = "var/cache" })), want: []string{"FieldValueInvalid spec.scratch[0].mountPath"}},
		{name: "mountPath not clean", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.MountPath = "/var/cache/../tmp" })), want: []string{"FieldValueInvalid spec.scratch[0].mountPath"}},
		{name: "mountPath trailing slash", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.MountPath = "/tmp/" })), want: []string{"FieldValueInvalid spec.scratch[0].mountPath"}},
		{name: "mountPath root", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.MountPath = "/" })), want: []string{"FieldValueInvalid spec.scratch[0].mountPath"}},
		{name: "mountPath with a colon", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.MountPath = "/var/a:b" })), want: []string{"FieldValueInvalid spec.scratch[0].mountPath"}},
		{name: "mountPath is nginx.conf", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.MountPath = "/etc/nginx/nginx.conf" })), want: []string{"FieldValueInvalid spec.scratch[0].mountPath"}},
		{name: "mountPath is the TLS directory", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.MountPath = "/etc/nginx/tls" })), want: []string{"FieldValueInvalid spec.scratch[0].mountPath"}},
		{name: "mountPath within the TLS directory", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.MountPath = "/etc/nginx/tls/web" })), want: []string{"FieldValueInvalid spec.scratch[0].mountPath"}},
		{name: "mountPath hides nginx's configuration directory", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.MountPath = "/etc" })), want: []string{"FieldValueInvalid spec.scratch[0].mountPath"}},
		{name: "mountPath is a spec.files mountPath", mutate: func(o *operator.NginxOperator) {
			o.Spec.Files = []operator.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/var/cache/nginx/proxy"}}
			o.Spec.Scratch = []operator.ScratchVolume{cache()}
		}, want: []string{"FieldValueInvalid spec.scratch[0].mountPath"}},
		{name: "mountPath within a spec.files mountPath", mutate: func(o *operator.NginxOperator) {
			o.Spec.Files = []operator.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/var/cache"}}
			o.Spec.Scratch = []operator.ScratchVolume{cache()}
		}, want: []string{"FieldValueInvalid spec.scratch[0].mountPath"}},
		{name: "mountPath contains a spec.files mountPath", mutate: func(o *operator.NginxOperator) {
			o.Spec.Files = []operator.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/var/cache/nginx/proxy/static"}}
			o.Spec.Scratch = []operator.ScratchVolume{cache()}
		}, want: []string{"FieldValueInvalid spec.scratch[0].mountPath"}},
		{name: "mountPath of another scratch volume", mutate: withScratch(cache(), with(func(v *operator.ScratchVolume) { v.Name = "tmp" })),
			want: []string{"FieldValueDuplicate spec.scratch[1].mountPath"}},
		{name: "mountPath within another scratch volume", mutate: withScratch(cache(), with(func(v *operator.ScratchVolume) { v.Name = "tmp"; v.MountPath = "/var/cache/nginx/proxy/tmp" })),
			want: []string{"FieldValueInvalid spec.scratch[1].mountPath"}},
		{name: "mountPath containing another scratch volume", mutate: withScratch(cache(), with(func(v *operator.ScratchVolume) { v.Name = "all"; v.MountPath = "/var" })),
			want: []string{"FieldValueInvalid spec.scratch[1].mountPath"}},

		{name: "medium HugePages", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.Medium = corev1.StorageMediumHugePages })), want: []string{"FieldValueNotSupported spec.scratch[0].medium"}},
		{name: "medium misspelt", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.Medium = "memory" })), want: []string{"FieldValueNotSupported spec.scratch[0].medium"}},

		{name: "sizeLimit missing", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.SizeLimit = resource.Quantity{} })), want: []string{"FieldValueRequired spec.scratch[0].sizeLimit"}},
		{name: "sizeLimit zero", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.SizeLimit = resource.MustParse("0") })), want: []string{"FieldValueRequired spec.scratch[0].sizeLimit"}},
		{name: "sizeLimit negative", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.SizeLimit = resource.MustParse("-1Gi") })), want: []string{"FieldValueInvalid spec.scratch[0].sizeLimit"}},
		{name: "sizeLimit fractional bytes", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.SizeLimit = resource.MustParse("1500m") })), want: []string{"FieldValueInvalid spec.scratch[0].sizeLimit"}},
		{name: "sizeLimit on disk over 64Gi", mutate: withScratch(with(func(v *operator.ScratchVolume) { v.SizeLimit = resource.MustParse("65Gi") })), want: []string{"FieldValueInvalid spec.scratch[0].sizeLimit"}},
		{name: "sizeLimit in memory over 16Gi", mutate: withScratch(with(func(v *operator.ScratchVolume) {
			v.Medium = corev1.StorageMediumMemory
			v.SizeLimit = resource.MustParse("17Gi")
		})), want: []string{"FieldValueInvalid spec.scratch[0].sizeLimit"}},
		{name: "every field wrong at once", mutate: withScratch(operator.ScratchVolume{Name: "-", MountPath: "tmp", Medium: "SSD"}), want: []string{
			"FieldValueInvalid spec.scratch[0].name",
			"FieldValueInvalid spec.scratch[0].mountPath",
			"FieldValueNotSupported spec.scratch[0].medium",
			"FieldValueRequired spec.scratch[0].sizeLimit",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := validObject()
			tc.mutate(o)
			errs := ValidateNginxOperator(o)
			assertErrors(t, errs, tc.want)
			assertErrorsExplainThemselves(t, tc.name, errs)
		})
	}
}

// TestValidateScratchMessages checks that the refusals say why.
func TestValidateScratchMessages(t *testing.T) {
	o := validObject()
	o.Spec.Files = []operator.ConfigMapFiles{{ConfigMapName: "site", MountPath: "/var/cache"}}
	o.Spec.Scratch = []operator.ScratchVolume{{Name: "cache", MountPath: "/var/cache/nginx"}, {Name: "tls", MountPath: "/etc/nginx/tls", SizeLimit: resource.MustParse("100Gi")}}
	got := ValidateNginxOperator(o).ToAggregate().Error()
	for _, want := range []string{
		`spec.scratch[0].mountPath: Invalid value: "/var/cache/nginx": overlaps spec.files[0].mountPath /var/cache`,
		`spec.scratch[0].sizeLimit: Required value: a scratch volume without a size limit could fill the node's disk or the pod's memory`,
		`spec.scratch[1].mountPath: Invalid value: "/etc/nginx/tls": must not be in or contain /etc/nginx`,
		`spec.scratch[1].sizeLimit: Invalid value: "100Gi": must be at most 64Gi`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %s\ndo not contain %s", got, want)
		}
	}
}
